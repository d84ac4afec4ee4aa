package core

// Role is one of Blocks' variable roles. Roles form a hierarchy: a variable
// with role WEIGHT also has role PARAMETER, and PERSISTENT (subclass
// matching, as Blocks' isinstance check).
type Role struct {
	Name   string
	Parent *Role
}

func (r *Role) String() string { return r.Name }

// IsA reports whether r is role or one of its descendants.
func (r *Role) IsA(role *Role) bool {
	for x := r; x != nil; x = x.Parent {
		if x == role {
			return true
		}
	}
	return false
}

func newRole(name string, parent *Role) *Role { return &Role{Name: name, Parent: parent} }

// Blocks' roles (blocks/roles.py), with its hierarchy.
var (
	Input                         = newRole("INPUT", nil)
	Output                        = newRole("OUTPUT", nil)
	Cost                          = newRole("COST", nil)
	Persistent                    = newRole("PERSISTENT", nil)
	Parameter                     = newRole("PARAMETER", Persistent)
	Auxiliary                     = newRole("AUXILIARY", nil)
	Weight                        = newRole("WEIGHT", Parameter)
	Bias                          = newRole("BIAS", Parameter)
	InitialState                  = newRole("INITIAL_STATE", Parameter)
	Filter                        = newRole("FILTER", Weight)
	Dropout                       = newRole("DROPOUT", nil)
	Collected                     = newRole("COLLECTED", nil)
	Collector                     = newRole("COLLECTOR", Parameter)
	AlgorithmState                = newRole("ALGORITHM_STATE", Persistent)
	AlgorithmHyperparameter       = newRole("ALGORITHM_HYPERPARAMETER", AlgorithmState)
	AlgorithmBuffer               = newRole("ALGORITHM_BUFFER", AlgorithmState)
	BatchNormPopulationStatistics = newRole("BATCH_NORM_POPULATION_STATISTICS", Persistent)
	BatchNormPopulationMean       = newRole("BATCH_NORM_POPULATION_MEAN", BatchNormPopulationStatistics)
	BatchNormPopulationStdev      = newRole("BATCH_NORM_POPULATION_STDEV", BatchNormPopulationStatistics)
	BatchNormGraphVariable        = newRole("BATCH_NORM_GRAPH_VARIABLE", nil)
	BatchNormOffset               = newRole("BATCH_NORM_OFFSET", BatchNormGraphVariable)
	BatchNormDivisor              = newRole("BATCH_NORM_DIVISOR", BatchNormGraphVariable)
	BatchNormMinibatchEstimate    = newRole("BATCH_NORM_MINIBATCH_ESTIMATE", BatchNormGraphVariable)
	BatchNormScaleParameter       = newRole("BATCH_NORM_SCALE_PARAMETER", Parameter)
	BatchNormShiftParameter       = newRole("BATCH_NORM_SHIFT_PARAMETER", Bias)
)

// AllRoles lists every role, in Blocks' order.
var AllRoles = []*Role{Input, Output, Cost, Persistent, Parameter, Auxiliary, Weight, Bias,
	InitialState, Filter, Dropout, Collected, Collector, AlgorithmState, AlgorithmHyperparameter,
	AlgorithmBuffer, BatchNormPopulationStatistics, BatchNormPopulationMean, BatchNormPopulationStdev,
	BatchNormGraphVariable, BatchNormOffset, BatchNormDivisor, BatchNormMinibatchEstimate,
	BatchNormScaleParameter, BatchNormShiftParameter}

// AddRole adds role to v's roles, replacing the more general ones it had,
// unless v already has it or a more specific one (Blocks' add_role).
func AddRole(v *Variable, role *Role) {
	// As Blocks' add_role: a more general role the variable had gives way
	// to role (PARAMETER then WEIGHT is [WEIGHT]); role is not added when
	// the variable already has it or a more specific one.
	kept := v.Tag.Roles[:0:0]
	for _, r := range v.Tag.Roles {
		if !role.IsA(r) || r == role {
			kept = append(kept, r)
		}
	}
	v.Tag.Roles = kept
	for _, r := range kept {
		if r.IsA(role) {
			return
		}
	}
	v.Tag.Roles = append(v.Tag.Roles, role)
}

// HasRole reports whether v has role or one of its descendants.
func HasRole(v *Variable, role *Role) bool {
	for _, r := range v.Tag.Roles {
		if r.IsA(role) {
			return true
		}
	}
	return false
}
