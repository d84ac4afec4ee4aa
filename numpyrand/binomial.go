package numpyrand

import "math"

// Binomial returns a draw from the binomial distribution with n trials and
// success probability p, exactly as RandomState.binomial(n, p) does
// (legacy_random_binomial): with q = min(p, 1-p), inversion when q*n <= 30
// and BTPE (Kachitvichyanukul & Schmeiser) otherwise, the result being
// reflected (n - X) when p > 0.5. Even degenerate cases (n == 0, p == 0,
// p == 1) consume one uniform draw, as in numpy.
//
// It panics if p is not in [0, 1] or n < 0 (numpy raises ValueError).
func (r *RandomState) Binomial(n int64, p float64) int64 {
	if !(p >= 0 && p <= 1) {
		panic("numpyrand: binomial: p < 0, p > 1 or p is NaN")
	}
	if n < 0 {
		panic("numpyrand: binomial: n < 0")
	}
	if p <= 0.5 {
		if p*float64(n) <= 30.0 {
			return r.binomialInversion(n, p)
		}
		return r.binomialBTPE(n, p)
	}
	q := 1.0 - p
	if q*float64(n) <= 30.0 {
		return n - r.binomialInversion(n, q)
	}
	return n - r.binomialBTPE(n, q)
}

type binomialInversionCache struct {
	valid     bool
	n         int64
	p         float64
	q, qn, np float64
	bound     int64
}

// binomialInversion is numpy's legacy_random_binomial_inversion.
func (r *RandomState) binomialInversion(n int64, p float64) int64 {
	c := &r.binInv
	if !c.valid || c.n != n || c.p != p {
		c.valid, c.n, c.p = true, n, p
		c.q = 1.0 - p
		c.qn = math.Exp(float64(n) * glibcLog(c.q))
		c.np = float64(n) * p
		// (RAND_INT_TYPE)MIN(n, np + 10.0*sqrt(np*q + 1)): the comparison
		// and the selected value are doubles, then truncated.
		b := c.np + float64(10.0*math.Sqrt(float64(c.np*c.q)+1))
		if float64(n) < b {
			b = float64(n)
		}
		c.bound = int64(b)
	}
	q, qn, bound := c.q, c.qn, c.bound

	var x int64
	px := qn
	u := r.RandomSample()
	for u > px {
		x++
		if x > bound {
			x = 0
			px = qn
			u = r.RandomSample()
		} else {
			u -= px
			px = (float64(n-x+1) * p * px) / (float64(x) * q)
		}
	}
	return x
}

type binomialBTPECache struct {
	valid                  bool
	n                      int64
	p                      float64
	r, q, fm               float64
	m                      int64
	p1, xm, xl, xr, c      float64
	laml, lamr, p2, p3, p4 float64
}

// binomialBTPE is numpy's legacy_random_binomial_btpe (the historical
// version that RandomState keeps, whose last Stirling correction terms are
// added in the order f, z, x, w).
func (r *RandomState) binomialBTPE(n int64, p float64) int64 {
	c := &r.binBTPE
	if !c.valid || c.n != n || c.p != p {
		c.valid, c.n, c.p = true, n, p
		c.r = math.Min(p, 1.0-p)
		c.q = 1.0 - c.r
		nf := float64(n)
		c.fm = float64(nf*c.r) + c.r
		c.m = int64(math.Floor(c.fm))
		c.p1 = math.Floor(float64(2.195*math.Sqrt(nf*c.r*c.q))-float64(4.6*c.q)) + 0.5
		c.xm = float64(c.m) + 0.5
		c.xl = c.xm - c.p1
		c.xr = c.xm + c.p1
		c.c = 0.134 + 20.5/(15.3+float64(c.m))
		a := (c.fm - c.xl) / (c.fm - float64(c.xl*c.r))
		c.laml = a * (1.0 + a/2.0)
		a = (c.xr - c.fm) / (c.xr * c.q)
		c.lamr = a * (1.0 + a/2.0)
		c.p2 = c.p1 * (1.0 + float64(2.0*c.c))
		c.p3 = c.p2 + c.c/c.laml
		c.p4 = c.p3 + c.c/c.lamr
	}
	rr, q, m := c.r, c.q, c.m
	p1, xm, xl, xr, cc := c.p1, c.xm, c.xl, c.xr, c.c
	laml, lamr, p2, p3, p4 := c.laml, c.lamr, c.p2, c.p3, c.p4

	var (
		a, u, v, s, F, rho, t, A, nrq float64
		x1, x2, f1, f2, z, z2, w, w2  float64
		x                             float64
		y, k, i                       int64
	)

Step10:
	nrq = float64(n) * rr * q
	u = r.RandomSample() * p4
	v = r.RandomSample()
	if u > p1 {
		goto Step20
	}
	y = int64(math.Floor(xm - float64(p1*v) + u))
	goto Step60

Step20:
	if u > p2 {
		goto Step30
	}
	x = xl + (u-p1)/cc
	v = float64(v*cc) + 1.0 - math.Abs(float64(m)-x+0.5)/p1
	if v > 1.0 {
		goto Step10
	}
	y = int64(math.Floor(x))
	goto Step50

Step30:
	if u > p3 {
		goto Step40
	}
	// numpy rejects v == 0 after the (then undefined) conversion; testing it
	// first is equivalent and keeps the conversion well defined.
	if v == 0.0 {
		goto Step10
	}
	y = int64(math.Floor(xl + glibcLog(v)/laml))
	if y < 0 {
		goto Step10
	}
	v = v * (u - p2) * laml
	goto Step50

Step40:
	if v == 0.0 {
		goto Step10
	}
	y = int64(math.Floor(xr - glibcLog(v)/lamr))
	if y > n {
		goto Step10
	}
	v = v * (u - p3) * lamr

Step50:
	k = y - m
	if k < 0 {
		k = -k
	}
	if k > 20 && float64(k) < nrq/2.0-1 {
		goto Step52
	}
	s = rr / q
	a = s * float64(n+1)
	F = 1.0
	if m < y {
		for i = m + 1; i <= y; i++ {
			F *= a/float64(i) - s
		}
	} else if m > y {
		for i = y + 1; i <= m; i++ {
			F /= a/float64(i) - s
		}
	}
	if v > F {
		goto Step10
	}
	goto Step60

Step52:
	{
		kf := float64(k)
		rho = (kf / nrq) * ((float64(kf*(kf/3.0+0.625))+0.16666666666666666)/nrq + 0.5)
		t = float64(-k*k) / (2 * nrq)
	}
	A = glibcLog(v)
	if A < t-rho {
		goto Step60
	}
	if A > t+rho {
		goto Step10
	}
	x1 = float64(y) + 1
	f1 = float64(m) + 1
	z = float64(n) + 1 - float64(m)
	w = float64(n) - float64(y) + 1
	x2 = x1 * x1
	f2 = f1 * f1
	z2 = z * z
	w2 = w * w
	if A > float64(xm*glibcLog(f1/x1))+
		float64((float64(n-m)+0.5)*glibcLog(z/w))+
		float64(float64(y-m)*glibcLog(w*rr/(x1*q)))+
		(13680.-(462.-(132.-(99.-140./f2)/f2)/f2)/f2)/f1/166320.+
		(13680.-(462.-(132.-(99.-140./z2)/z2)/z2)/z2)/z/166320.+
		(13680.-(462.-(132.-(99.-140./x2)/x2)/x2)/x2)/x1/166320.+
		(13680.-(462.-(132.-(99.-140./w2)/w2)/w2)/w2)/w/166320. {
		goto Step10
	}

Step60:
	if p > 0.5 {
		y = n - y
	}
	return y
}
