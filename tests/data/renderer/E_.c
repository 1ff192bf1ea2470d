
void E_(float* restrict data0, float* restrict data1) {
  float val0 = *(data1+0);
  *(data0+0) = ((val0*3.0f)+1.0f);
}
