
void r_16(float* restrict data0, float* restrict data1) {
  float acc0 = 0.0f;
  for (int ridx0 = 0; ridx0 < 16; ridx0++) {
    float val0 = *(data1+ridx0);
    float alu0 = ((0.0f<val0)?val0:0.0f);
    acc0 = (acc0+alu0);
  }
  *(data0+0) = acc0;
}
