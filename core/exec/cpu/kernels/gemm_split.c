// Two-part matrix products on a dedicated C thread: the caller computes
// part 0 while the worker computes part 1, inside one cgo call, so that
// neither part waits for Go's scheduler (see gemm_split.go).

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <cblas.h>
#include "gemm_split.h"

// Hand-over. Waking a sleeping thread takes 15-25 µs on these machines
// (a futex wake-up of an idle virtual CPU), and a split product runs every
// few hundred microseconds during training. So each side first polls for
// up to spin_us microseconds (200 unless the settings say otherwise,
// kernels/settings.go), calling sched_yield between looks so that any
// other runnable thread (Go's own workers) gets the core, and only then
// sleeps on a condition variable. Measured (medians of 7 interleaved
// rounds): the tutorial MLP 383k -> 422k examples/s, the 784-500-10 MLP
// 94k -> 100k, LeNet unchanged; a busy poll without yielding instead made
// the 784-500-10 step 50% slower (it took the core from Go's workers).
static int spin_us = 200;

void blocks_gemm_set_spin(int us) { __atomic_store_n(&spin_us, us, __ATOMIC_RELAXED); }

typedef struct {
	int dbl, ta, tb, m, n, k, lda, ldb, ldc;
	const void *a, *b;
	void *c;
} gemm_part;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static gemm_part job;     // the worker's part, guarded by mu
static int has_job, done; // guarded by mu, polled atomically

static double now_us(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

// poll waits up to spin_us for *flag, yielding the core to any other
// runnable thread meanwhile.
static void poll(int *flag) {
	double t0 = now_us();
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && now_us() - t0 < __atomic_load_n(&spin_us, __ATOMIC_RELAXED)) {
		sched_yield();
	}
}

static void run(const gemm_part *p) {
	if (p->m <= 0 || p->n <= 0) {
		return;
	}
	enum CBLAS_TRANSPOSE ta = p->ta ? CblasTrans : CblasNoTrans, tb = p->tb ? CblasTrans : CblasNoTrans;
	if (p->dbl) {
		cblas_dgemm(CblasRowMajor, ta, tb, p->m, p->n, p->k, 1, p->a, p->lda, p->b, p->ldb, 0, p->c, p->ldc);
	} else {
		cblas_sgemm(CblasRowMajor, ta, tb, p->m, p->n, p->k, 1, p->a, p->lda, p->b, p->ldb, 0, p->c, p->ldc);
	}
}

static void *worker(void *arg) {
	(void)arg;
	// Process-directed signals (SIGINT, SIGTERM for the main loop) go to
	// Go's threads, never to this one.
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, 0);
	for (;;) {
		poll(&has_job);
		pthread_mutex_lock(&mu);
		while (!has_job) {
			pthread_cond_wait(&job_cv, &mu);
		}
		gemm_part p = job;
		__atomic_store_n(&has_job, 0, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&mu);
		run(&p);
		pthread_mutex_lock(&mu);
		__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
		pthread_cond_signal(&done_cv);
		pthread_mutex_unlock(&mu);
	}
	return 0;
}

static int started;

static void start(void) {
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	started = pthread_create(&t, &attr, worker, 0) == 0;
	pthread_attr_destroy(&attr);
}

void blocks_gemm2(int dbl, int ta, int tb, int k, int lda, int ldb, int ldc,
                  int m0, int n0, const void *a0, const void *b0, void *c0,
                  int m1, int n1, const void *a1, const void *b1, void *c1) {
	gemm_part p0 = {dbl, ta, tb, m0, n0, k, lda, ldb, ldc, a0, b0, c0};
	gemm_part p1 = {dbl, ta, tb, m1, n1, k, lda, ldb, ldc, a1, b1, c1};
	pthread_once(&once, start);
	if (!started) { // no thread: both parts here, same results
		run(&p0);
		run(&p1);
		return;
	}
	pthread_mutex_lock(&mu);
	job = p1;
	__atomic_store_n(&done, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&has_job, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&job_cv);
	pthread_mutex_unlock(&mu);
	run(&p0);
	poll(&done);
	pthread_mutex_lock(&mu);
	while (!done) {
		pthread_cond_wait(&done_cv, &mu);
	}
	pthread_mutex_unlock(&mu);
}
