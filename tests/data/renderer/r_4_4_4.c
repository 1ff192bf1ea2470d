typedef float float4 __attribute__((aligned(16),vector_size(16)));
void r_4_4_4(float* restrict data0, float* restrict data1, float* restrict data2) {
  for (int ridx0 = 0; ridx0 < 4; ridx0++) {
    int alu0 = (ridx0<<2);
    float4 val0 = *((float4*)((data1+alu0)));
    for (int ridx1 = 0; ridx1 < 4; ridx1++) {
      float val1 = *(data2+ridx1);
      float val2 = *(data2+(ridx1+4));
      float val3 = *(data2+(ridx1+8));
      float val4 = *(data2+(ridx1+12));
      *(data0+(alu0+ridx1)) = ((val0[0]*val1)+(val0[1]*val2)+(val0[2]*val3)+(val0[3]*val4));
    }
  }
}
