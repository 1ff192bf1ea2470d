
void r_256(float* restrict data0, float* restrict data1) {
  float acc0 = 0.0f;
  for (int ridx0 = 0; ridx0 < 256; ridx0++) {
    float val0 = *(data1+ridx0);
    acc0 = (acc0+val0);
  }
  *(data0+0) = acc0;
}
