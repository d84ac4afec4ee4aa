package vec

// GRUGradN32 is the unmasked first half of a GRU step's gradient on one
// row (core's gruStepGradN): from dh, the new state's gradient, the
// candidate n, the update gate u and the previous state hp, it sets
// dan = dh·u·(1−n·n), dg = (dh·n − dh·hp)·u·(1−u) and dhp = dh·(1−u) + 0,
// each product rounded in the Go expression's order (no fused
// multiply-add), so the AVX2 kernel gives the loop's bits.
func GRUGradN32(dan, dg, dhp, dh, u, n, hp []float32) {
	d := len(dan)
	dg, dhp, dh, u, n, hp = dg[:d], dhp[:d], dh[:d], u[:d], n[:d], hp[:d]
	done := 0
	if useAVX2 && d >= 8 {
		done = d &^ 7
		gruGradN32AVX2(&dan[0], &dg[0], &dhp[0], &dh[0], &u[0], &n[0], &hp[0], done)
	}
	for j := done; j < d; j++ {
		dn, uj := dh[j], u[j]
		var keep float32
		dan[j] = dn * uj * (1 - n[j]*n[j])
		dg[j] = (dn*n[j] - dn*hp[j]) * uj * (1 - uj)
		dhp[j] = dn*(1-uj) + keep
	}
}

// GRUGradR32 is the second half on one row (core's gruStepGradR): from
// dr, the gradient of hp·r, it sets dhp += dr·r and dg = dr·hp·r·(1−r),
// in the Go expression's order.
func GRUGradR32(dg, dhp, dr, hp, r []float32) {
	d := len(dg)
	dhp, dr, hp, r = dhp[:d], dr[:d], hp[:d], r[:d]
	done := 0
	if useAVX2 && d >= 8 {
		done = d &^ 7
		gruGradR32AVX2(&dg[0], &dhp[0], &dr[0], &hp[0], &r[0], done)
	}
	for j := done; j < d; j++ {
		rj := r[j]
		dhp[j] += dr[j] * rj
		dg[j] = dr[j] * hp[j] * rj * (1 - rj)
	}
}

// GRUStep32 is the new state of a GRU step on one row (core's gruStep,
// before the mask): h = n·u + hp·(1−u), each operation rounded in the Go
// expression's order.
func GRUStep32(h, n, u, hp []float32) {
	d := len(h)
	n, u, hp = n[:d], u[:d], hp[:d]
	done := 0
	if useAVX2 && d >= 8 {
		done = d &^ 7
		gruStep32AVX2(&h[0], &n[0], &u[0], &hp[0], done)
	}
	for j := done; j < d; j++ {
		h[j] = n[j]*u[j] + hp[j]*(1-u[j])
	}
}
