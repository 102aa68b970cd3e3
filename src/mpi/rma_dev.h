/* Device buffers in one-sided operations (rma_dev.c). */
#ifndef WH_MPI_RMA_DEV_H
#define WH_MPI_RMA_DEV_H
#include "rma/rma.h"

/* wh_rma_op with origin, compare and result buffers that may be device
 * memory (staged through host temporaries); called only when a non-host
 * memory kind is registered */
int wh_rma_op_dev(wh_win_t *w, wh_rma_args_t *a, wh_req_t **req);
#endif
