typedef float float4 __attribute__((aligned(16),vector_size(16)));
void E_64_4(float* restrict data0, float* restrict data1) {
  for (int ridx0 = 0; ridx0 < 64; ridx0++) {
    int alu0 = (ridx0<<2);
    float4 val0 = *((float4*)((data1+alu0)));
    *((float4*)((data0+alu0))) = (float4){((val0[0]*2.0f)+1.0f),((val0[1]*2.0f)+1.0f),((val0[2]*2.0f)+1.0f),((val0[3]*2.0f)+1.0f)};
  }
}
