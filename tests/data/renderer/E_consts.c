
void E_consts(float* restrict data0, float* restrict data1, float* restrict data2, float* restrict data3, float* restrict data4, __fp16* restrict data5, __fp16* restrict data6, unsigned short* restrict data7, long* restrict data8, unsigned long* restrict data9, unsigned int* restrict data10, unsigned char* restrict data11, unsigned short* restrict data12, signed char* restrict data13, short* restrict data14, _Bool* restrict data15, _Bool* restrict data16, double* restrict data17, double* restrict data18, int* restrict data19) {
  *(data0+0) = ((float)(__builtin_inff()));
  *(data1+0) = ((float)(-__builtin_inff()));
  *(data2+0) = ((float)(__builtin_nanf("")));
  *(data3+0) = 1e-05f;
  *(data4+0) = -0.0f;
  *(data5+0) = ((__fp16)(1.5f));
  *(data6+0) = ((__fp16)(-__builtin_inff()));
  *(data7+0) = ((unsigned short)(16384u));
  *(data8+0) = -3ll;
  *(data9+0) = 7ull;
  *(data10+0) = 8u;
  *(data11+0) = ((unsigned char)(9u));
  *(data12+0) = ((unsigned short)(10u));
  *(data13+0) = ((signed char)(-11));
  *(data14+0) = ((short)(12));
  *(data15+0) = 1;
  *(data16+0) = 0;
  *(data17+0) = 2.5;
  *(data18+0) = ((double)(__builtin_nanf("")));
  *(data19+0) = -5;
}
