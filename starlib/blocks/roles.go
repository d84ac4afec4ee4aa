package blocks

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.roles: Blocks' variable roles.
//
//	INPUT OUTPUT COST PERSISTENT PARAMETER AUXILIARY WEIGHT BIAS INITIAL_STATE
//	FILTER DROPOUT COLLECTED COLLECTOR ALGORITHM_STATE ALGORITHM_HYPERPARAMETER
//	ALGORITHM_BUFFER BATCH_NORM_* (population statistics, mean, stdev, graph
//	variable, offset, divisor, minibatch estimate, scale and shift parameters)
//	add_role(var, role)                   tags var with role
//	has_roles(var, roles, match_all=False) whether var has one (all) of roles
//
// Roles match by subclass, as in Blocks: a WEIGHT is a PARAMETER, which is
// PERSISTENT.
func rolesModules() (mods []*starlarkstruct.Module) {
	members := starlark.StringDict{
		"add_role": starlib.NewBuiltin("add_role", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var v *starlib.Variable
			var r *starlib.Role
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "var", &v, "role", &r); err != nil {
				return nil, err
			}
			core.AddRole(v.V, r.R)
			return starlark.None, nil
		}),
		"has_roles": starlib.NewBuiltin("has_roles", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var v *starlib.Variable
			var roles starlark.Iterable
			matchAll := false
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "var", &v, "roles", &roles, "match_all?", &matchAll); err != nil {
				return nil, err
			}
			rs, err := rolesOf(roles)
			if err != nil {
				return nil, fmt.Errorf("has_roles: %v", err)
			}
			n := 0
			for _, r := range rs {
				if core.HasRole(v.V, r) {
					n++
				}
			}
			return starlark.Bool(n > 0 && (!matchAll || n == len(rs))), nil
		}),
	}
	for _, r := range core.AllRoles {
		members[r.Name] = &starlib.Role{R: r}
	}
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.roles", Members: members})
	return
}

func rolesOf(v starlark.Iterable) ([]*core.Role, error) {
	var out []*core.Role
	var bad []string
	it := v.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		r, ok := x.(*starlib.Role)
		if !ok {
			bad = append(bad, x.Type())
			continue
		}
		out = append(out, r.R)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("roles must be roles from blocks.roles, got %s", strings.Join(bad, ", "))
	}
	return out, nil
}
