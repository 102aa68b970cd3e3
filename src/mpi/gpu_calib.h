/* wharf-info --calibrate: measure the device-buffer schemes between the two
 * ranks of the job and write the tuning file WHARF_CUDA_TUNING loads
 * (gpu_calib.c; format in docs/GPU.md).  Collective over MPI_COMM_WORLD. */
#ifndef WH_MPI_GPU_CALIB_H
#define WH_MPI_GPU_CALIB_H
int wh_gpu_calibrate(const char *path);
#endif
