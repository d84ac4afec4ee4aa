package core

import (
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// AddRole replaces a more general role, as Blocks' add_role: PARAMETER
// then WEIGHT is [WEIGHT]; WEIGHT then PARAMETER stays [WEIGHT].
func TestAddRoleReplacesParent(t *testing.T) {
	v := NewShared(nd.New(nd.Float64, 2), "W")
	AddRole(v, Parameter)
	AddRole(v, Weight)
	if len(v.Tag.Roles) != 1 || v.Tag.Roles[0] != Weight {
		t.Errorf("PARAMETER then WEIGHT: %v", v.Tag.Roles)
	}
	AddRole(v, Parameter)
	AddRole(v, Weight)
	if len(v.Tag.Roles) != 1 || v.Tag.Roles[0] != Weight {
		t.Errorf("then PARAMETER, WEIGHT again: %v", v.Tag.Roles)
	}
	AddRole(v, Auxiliary)
	if len(v.Tag.Roles) != 2 || !HasRole(v, Parameter) || !HasRole(v, Auxiliary) {
		t.Errorf("then AUXILIARY: %v", v.Tag.Roles)
	}
}
