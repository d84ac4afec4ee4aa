package vec

// The pointer table of lstmGrad32AVX2: the row's 21 streams, in this
// order (lstm_amd64.s reads them at these offsets ×8).
const (
	lgI, lgF, lgC, lgO         = 0, 1, 2, 3   // the activated gates i, f, c̃, o
	lgDaI, lgDaF, lgDaG, lgDaO = 4, 5, 6, 7   // their pre-activations' gradients
	lgDh1, lgDh2, lgDc1, lgDcp = 8, 9, 10, 11 // dh = dh1 + dh2, dc = dc1 + dcp
	lgTc, lgCp, lgCell         = 12, 13, 14   // tanh(c), c(t-1), c
	lgWci, lgWcf, lgWco        = 15, 16, 17   // the peepholes
	lgSci, lgScf, lgSco        = 18, 19, 20   // the peepholes' gradient sums
	lgStreams                  = 21
)

// LSTMGrad32 is the unmasked gradient of one LSTM step on one row (core's
// lstmStepGrad with no mask, after its caller's sums of the incoming
// gradients): with d = len(dh1), dh = dh1 + dh2 the new state's gradient
// and dc = dc1 + dcp the new cell's (dcp holding, on entry, the cell
// gradient carried from the step after), g = [i f c̃ o] the activated
// gates (4d), c the new cell, tc = tanh(c), cp the previous cell, and
// wci, wcf, wco the peepholes, it writes the gates' pre-activation
// gradients to da (4d) and the previous cell's gradient to dcp, and adds
// the peepholes' gradients to sci, scf and sco. Every operation is
// rounded in the order of lstmStepGrad's Go expressions (no fused
// multiply-add), so the AVX2 kernel gives the loop's bits.
func LSTMGrad32(da, dcp, sci, scf, sco, dh1, dh2, dc1, g, c, tc, cp, wci, wcf, wco []float32) {
	d := len(dh1)
	da, g = da[:4*d], g[:4*d]
	dcp, sci, scf, sco, dh2, dc1 = dcp[:d], sci[:d], scf[:d], sco[:d], dh2[:d], dc1[:d]
	c, tc, cp, wci, wcf, wco = c[:d], tc[:d], cp[:d], wci[:d], wcf[:d], wco[:d]
	done := 0
	if useAVX2 && d >= 8 {
		done = d &^ 7
		var p [lgStreams]*float32
		p[lgI], p[lgF], p[lgC], p[lgO] = &g[0], &g[d], &g[2*d], &g[3*d]
		p[lgDaI], p[lgDaF], p[lgDaG], p[lgDaO] = &da[0], &da[d], &da[2*d], &da[3*d]
		p[lgDh1], p[lgDh2], p[lgDc1], p[lgDcp] = &dh1[0], &dh2[0], &dc1[0], &dcp[0]
		p[lgTc], p[lgCp], p[lgCell] = &tc[0], &cp[0], &c[0]
		p[lgWci], p[lgWcf], p[lgWco] = &wci[0], &wcf[0], &wco[0]
		p[lgSci], p[lgScf], p[lgSco] = &sci[0], &scf[0], &sco[0]
		lstmGrad32AVX2(&p, done)
	}
	for j := done; j < d; j++ {
		dhn, dcn := dh1[j]+dh2[j], dc1[j]+dcp[j]
		var keepC float32
		i, f, cc, o := g[j], g[d+j], g[2*d+j], g[3*d+j]
		t := tc[j]
		do := dhn * t
		dct := dcn + dhn*o*(1-t*t)
		dao := do * o * (1 - o)
		dct += dao * wco[j]
		dai := dct * cc * i * (1 - i)
		daf := dct * cp[j] * f * (1 - f)
		dag := dct * i * (1 - cc*cc)
		da[j], da[d+j], da[2*d+j], da[3*d+j] = dai, daf, dag, dao
		dcp[j] = dct*f + dai*wci[j] + daf*wcf[j] + keepC
		sci[j] += dai * cp[j]
		scf[j] += daf * cp[j]
		sco[j] += dao * c[j]
	}
}
