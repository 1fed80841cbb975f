/* gpuload: load an NVIDIA GPU from a PTX kernel through the CUDA driver API (JIT, no compiler).
   usage: gpuload SECONDS [DUTY_ON_MS DUTY_OFF_MS]  -- prints launches and timing to stdout. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
typedef int CUresult; typedef int CUdevice; typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;
typedef unsigned long long CUdeviceptr;
static const char *ptx =
".version 7.0\n.target sm_80\n.address_size 64\n"
".visible .entry burn(.param .u64 out, .param .u32 iters)\n{\n"
" .reg .f32 f<4>;\n .reg .b32 r<6>;\n .reg .pred p;\n .reg .b64 rd<5>;\n"
" ld.param.u64 rd0, [out];\n ld.param.u32 r0, [iters];\n"
" mov.u32 r1, %tid.x;\n mov.u32 r4, %ctaid.x;\n mov.u32 r5, %ntid.x;\n mad.lo.u32 r3, r4, r5, r1;\n"
" cvt.rn.f32.u32 f0, r3;\n mov.f32 f1, 0f3F7FFFFE;\n mov.f32 f2, 0f3F800000;\n mov.f32 f3, 0f00000000;\n"
" mov.u32 r2, 0;\n"
"LOOP:\n fma.rn.f32 f3, f0, f1, f3;\n fma.rn.f32 f0, f2, f1, f0;\n fma.rn.f32 f2, f3, f1, f2;\n fma.rn.f32 f3, f2, f1, f3;\n"
" add.u32 r2, r2, 1;\n setp.lt.u32 p, r2, r0;\n @p bra LOOP;\n"
" cvta.to.global.u64 rd1, rd0;\n mul.wide.u32 rd2, r3, 4;\n add.u64 rd3, rd1, rd2;\n st.global.f32 [rd3], f3;\n ret;\n}\n";
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
#define LOAD(name) name = dlsym(h, #name); if(!name){fprintf(stderr,"no %s\n",#name);return 2;}
int main(int argc,char**argv){
  double secs = argc>1?atof(argv[1]):10; int on = argc>2?atoi(argv[2]):0, off = argc>3?atoi(argv[3]):0;
  void*h=dlopen("libcuda.so.1",RTLD_NOW); if(!h){fprintf(stderr,"dlopen: %s\n",dlerror());return 2;}
  CUresult (*cuInit)(unsigned); CUresult (*cuDeviceGet)(CUdevice*,int); CUresult (*cuCtxCreate_v2)(CUcontext*,unsigned,CUdevice);
  CUresult (*cuModuleLoadData)(CUmodule*,const void*); CUresult (*cuModuleGetFunction)(CUfunction*,CUmodule,const char*);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr*,size_t); CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuLaunchKernel)(CUfunction,unsigned,unsigned,unsigned,unsigned,unsigned,unsigned,unsigned,CUstream,void**,void**);
  CUresult (*cuDeviceGetAttribute)(int*,int,CUdevice);
  LOAD(cuInit) LOAD(cuDeviceGet) LOAD(cuCtxCreate_v2) LOAD(cuModuleLoadData) LOAD(cuModuleGetFunction)
  LOAD(cuMemAlloc_v2) LOAD(cuCtxSynchronize) LOAD(cuLaunchKernel) LOAD(cuDeviceGetAttribute)
  CUdevice d; CUcontext c; CUmodule m; CUfunction f; CUdeviceptr out; int r, sms=0;
  if((r=cuInit(0))||(r=cuDeviceGet(&d,0))||(r=cuCtxCreate_v2(&c,0,d))){fprintf(stderr,"init %d\n",r);return 3;}
  cuDeviceGetAttribute(&sms,16/*MULTIPROCESSOR_COUNT*/,d);
  if((r=cuModuleLoadData(&m,ptx))){fprintf(stderr,"module (PTX JIT) %d\n",r);return 3;}
  if((r=cuModuleGetFunction(&f,m,"burn"))){fprintf(stderr,"function %d\n",r);return 3;}
  unsigned blocks = (unsigned)(sms>0?sms:132)*8, threads=256, iters=200000;
  if((r=cuMemAlloc_v2(&out,(size_t)blocks*threads*4))){fprintf(stderr,"alloc %d\n",r);return 3;}
  void*args[]={&out,&iters};
  double t0=now(), end=t0+secs, k0=0; long n=0; int phase_on=1; double phase_t=t0;
  printf("gpuload: %d SMs, %u blocks x %u threads, %.0f s, duty %d/%d ms, start %.3f\n",sms,blocks,threads,secs,on,off,t0); fflush(stdout);
  while(now()<end){
    if(on>0){ double el=(now()-phase_t)*1e3;
      if(phase_on && el>=on){phase_on=0;phase_t=now();printf("off %.3f\n",now()-t0);fflush(stdout);}
      else if(!phase_on && el>=off){phase_on=1;phase_t=now();printf("on %.3f\n",now()-t0);fflush(stdout);}
      if(!phase_on){usleep(5000);continue;} }
    double k=now();
    if((r=cuLaunchKernel(f,blocks,1,1,threads,1,1,0,0,args,0))){fprintf(stderr,"launch %d\n",r);return 4;}
    if((r=cuCtxSynchronize())){fprintf(stderr,"sync %d\n",r);return 4;}
    k0+=now()-k; n++;
  }
  printf("gpuload: %ld kernels, %.3f s busy of %.3f s; %.1f ms per kernel\n",n,k0,now()-t0,n?k0/n*1e3:0);
  return 0;
}
