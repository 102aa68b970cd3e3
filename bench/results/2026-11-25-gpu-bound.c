/* the emulator's copy rates for one process: DtoH, HtoD, peer (device 0 -> 1), MB/s */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int c,char**v){size_t n=c>1?strtoull(v[1],0,0):1<<20;int it=c>2?atoi(v[2]):50;
 cuInit(0);CUcontext c0,c1;cuDevicePrimaryCtxRetain(&c0,0);cuDevicePrimaryCtxRetain(&c1,1);
 CUdeviceptr a,b;cuCtxSetCurrent(c1);cuMemAlloc(&b,n);cuCtxSetCurrent(c0);cuMemAlloc(&a,n);void*h;cuMemAllocHost(&h,n);
 cuMemsetD8(a,1,n);cuMemcpyDtoH(h,a,n);cuMemcpyHtoD(a,h,n);cuMemcpyPeer(b,c1,a,c0,n);
 double t0=now();for(int i=0;i<it;i++)cuMemcpyDtoH(h,a,n);double t1=now();for(int i=0;i<it;i++)cuMemcpyHtoD(a,h,n);
 double t2=now();for(int i=0;i<it;i++)cuMemcpyPeer(b,c1,a,c0,n);double t3=now();
 printf("%zu dtoh %.0f htod %.0f peer %.0f\n",n,n*it/(t1-t0)/1e6,n*it/(t2-t1)/1e6,n*it/(t3-t2)/1e6);return 0;}
