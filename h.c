#include <stdio.h>
#include <stdlib.h>
#include <time.h>
void r_128_32_512_8_32_2(float* restrict data0, float* restrict data1, float* restrict data2);
static double now(){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int main(){ int n=1024; float*a=aligned_alloc(64,n*n*4),*b=aligned_alloc(64,n*n*4),*c=aligned_alloc(64,n*n*4);
 for(int i=0;i<n*n;i++){a[i]=rand()/(float)RAND_MAX;b[i]=rand()/(float)RAND_MAX;}
 double best=1e9; for(int r=0;r<5;r++){double s=now(); r_128_32_512_8_32_2(c,a,b); double t=now()-s; if(t<best)best=t;}
 printf("%.2f ms %.1f GFLOP/s (1 core)\n",best*1e3,2.0*n*n*n/best/1e9);}
