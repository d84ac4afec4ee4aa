package checkpoint

import "strings"

// DisplayName is the name of an algorithm state array as people read it.
// Its key ("004:|mlp|linear_0.W.|mlp|linear_0.W_time") joins the
// parameter's path and the buffer's own name, which step rules already
// make from that path; the key stays as it is (checkpoints are matched on
// it), and the display drops the repeated path: "004:|mlp|linear_0.W_time".
func DisplayName(key string) string {
	prefix, name := "", key
	if i := strings.IndexByte(key, ':'); i >= 0 {
		prefix, name = key[:i+1], key[i+1:]
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '.' && i > 0 && strings.HasPrefix(name[i+1:], name[:i]) {
			return prefix + name[i+1:]
		}
	}
	return key
}
