typedef float float4 __attribute__((aligned(16),vector_size(16)));
void r_16(float* restrict data0, float* restrict data1) {
  float4 val0 = *((float4*)((data1+0)));
  float4 val1 = *((float4*)((data1+4)));
  float4 val2 = *((float4*)((data1+8)));
  float4 val3 = *((float4*)((data1+12)));
  float alu0 = ((0.0f<val0[0])?val0[0]:0.0f);
  float alu1 = ((0.0f<val1[0])?val1[0]:0.0f);
  float alu2 = ((0.0f<val2[0])?val2[0]:0.0f);
  float alu3 = ((0.0f<val3[0])?val3[0]:0.0f);
  float alu4 = ((0.0f<val0[1])?val0[1]:0.0f);
  float alu5 = ((0.0f<val1[1])?val1[1]:0.0f);
  float alu6 = ((0.0f<val2[1])?val2[1]:0.0f);
  float alu7 = ((0.0f<val3[1])?val3[1]:0.0f);
  float alu8 = ((0.0f<val0[2])?val0[2]:0.0f);
  float alu9 = ((0.0f<val1[2])?val1[2]:0.0f);
  float alu10 = ((0.0f<val2[2])?val2[2]:0.0f);
  float alu11 = ((0.0f<val3[2])?val3[2]:0.0f);
  float alu12 = ((0.0f<val0[3])?val0[3]:0.0f);
  float alu13 = ((0.0f<val1[3])?val1[3]:0.0f);
  float alu14 = ((0.0f<val2[3])?val2[3]:0.0f);
  float alu15 = ((0.0f<val3[3])?val3[3]:0.0f);
  *(data0+0) = (alu0+alu4+alu8+alu12+alu1+alu5+alu9+alu13+alu2+alu6+alu10+alu14+alu3+alu7+alu11+alu15);
}
