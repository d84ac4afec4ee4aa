package core

import (
	"fmt"
	"reflect"
)

// UserAnnotation is Blocks' Annotation: auxiliary variables (and updates)
// attached to a variable by hand with AddAnnotation; a computation graph
// that meets the variable lists them, as those of an application call.
type UserAnnotation struct {
	AuxiliaryVariables []*Variable
	Updates            []Update
}

// AnnotationName describes the annotation.
func (a *UserAnnotation) AnnotationName() string { return "Annotation" }

// AddAuxiliaryVariable tags v as AUXILIARY (plus roles), names it when
// name is set, and records it.
func (a *UserAnnotation) AddAuxiliaryVariable(v *Variable, name string, roles ...*Role) {
	if name != "" {
		v.Name = name
	}
	AddRole(v, Auxiliary)
	for _, r := range roles {
		AddRole(v, r)
	}
	a.AuxiliaryVariables = append(a.AuxiliaryVariables, v)
}

// AddAnnotation appends annotation to v's annotations; as Blocks'
// add_annotation it refuses a second annotation of the same kind (two
// bricks, two application calls, two Annotations).
func AddAnnotation(v *Variable, annotation Annotation) error {
	t := reflect.TypeOf(annotation)
	for _, old := range v.Tag.Annotations {
		if reflect.TypeOf(old) == t {
			return fmt.Errorf("%s already has an annotation of this kind (%s)", v, old.AnnotationName())
		}
	}
	v.Tag.Annotations = append(v.Tag.Annotations, annotation)
	return nil
}
