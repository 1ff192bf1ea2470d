
void test(float* restrict data0, float* restrict data1, const int b, const int a) {
  for (int ridx0 = 0; ridx0 < 16; ridx0++) {
    int alu0 = (ridx0+a);
    float val0 = ((alu0<b)?*(data1+alu0):1.0f);
    if ((ridx0<a)) {
      *(data0+ridx0) = val0;
    }
  }
}
