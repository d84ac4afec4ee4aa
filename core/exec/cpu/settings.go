package cpu

import "github.com/blocks-go/blocks/core/exec/cpu/kernels"

// Settings are the settings in force (kernels.Settings documents each).
func Settings() kernels.Settings { return kernels.Current() }

// ConfigureFromEnv puts in force this machine's default settings with the
// overrides getenv gives (kernels.Overrides: BLOCKS_CPU_WORKERS, ...,
// BLOCKS_NOFUSE); a program passes os.Getenv, once, at start-up. A
// malformed override is an error naming it (the others are applied).
func ConfigureFromEnv(getenv func(string) string) error {
	s, err := kernels.FromEnv(getenv)
	if cerr := kernels.Configure(s); cerr != nil {
		return cerr
	}
	return err
}

// BLASName names the BLAS this build multiplies with.
const BLASName = kernels.BLASName
