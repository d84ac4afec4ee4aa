void blocks_gemm2(int dbl, int ta, int tb, int k, int lda, int ldb, int ldc,
                  int m0, int n0, const void *a0, const void *b0, void *c0,
                  int m1, int n1, const void *a1, const void *b1, void *c1);
void blocks_gemm_set_spin(int us);
