
void r_4_4_4(float* restrict data0, float* restrict data1, float* restrict data2) {
  for (int ridx0 = 0; ridx0 < 4; ridx0++) {
    int alu0 = (ridx0<<2);
    for (int ridx1 = 0; ridx1 < 4; ridx1++) {
      float acc0 = 0.0f;
      for (int ridx2 = 0; ridx2 < 4; ridx2++) {
        float val0 = *(data2+((ridx2<<2)+ridx1));
        float val1 = *(data1+(alu0+ridx2));
        acc0 = (acc0+(val1*val0));
      }
      *(data0+(alu0+ridx1)) = acc0;
    }
  }
}
