
void r_alu(float* restrict data0, float* restrict data1, int* restrict data2, double* restrict data3, const int n) {
  for (int ridx0 = 0; ridx0 < n; ridx0++) {
    float val0 = *(data1+ridx0);
    int val1 = *(data2+ridx0);
    double val2 = *(data3+ridx0);
    int alu0 = (((((val1/3)<<2)^((val1%3)>>2))|val1)&255&val1);
    float alu1 = ((alu0!=3)?(-(1/__builtin_sqrtf(val0))*((float)(alu0))*((float)(__builtin_sqrt(val2)))):val0);
    float alu2 = ((val0<0.5f)?alu1:((float)(__builtin_inff())));
    float precast0 = ((alu2+alu2)-val0);
    *(data0+ridx0) = ((float)((*((unsigned int*)&precast0))));
  }
}
