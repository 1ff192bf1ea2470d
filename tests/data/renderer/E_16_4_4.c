typedef float float4 __attribute__((aligned(16),vector_size(16)));
void E_16_4_4(float* restrict data0, float* restrict data1) {
  for (int ridx0 = 0; ridx0 < 16; ridx0++) {
    for (int ridx1 = 0; ridx1 < 4; ridx1++) {
      int alu0 = ((ridx1<<6)+ridx0);
      float val0 = *(data1+alu0);
      float val1 = *(data1+(alu0+16));
      float val2 = *(data1+(alu0+32));
      float val3 = *(data1+(alu0+48));
      *((float4*)((data0+((ridx0<<4)+(ridx1<<2))))) = (float4){val0,val1,val2,val3};
    }
  }
}
