package blocks

import "github.com/blocks-go/blocks/bricks"

// applicationSpec is the @recurrent signature of a brick's application,
// which Blocks exposes as application.sequences, .states and .contexts:
// a recurrent brick's own, a RecurrentStack's (built from its layers')
// and, for a Bidirectional, its forward child's (Blocks' apply.delegate).
func applicationSpec(b bricks.Brick, app string) (bricks.RecurrentSpec, bool) {
	switch x := b.(type) {
	case *bricks.RecurrentStack:
		if app == "apply" {
			return x.Spec(), true
		}
	case *bricks.Bidirectional:
		if app == "apply" {
			return applicationSpec(x.Forward, app)
		}
	}
	if rb, ok := b.(bricks.RecurrentBrick); ok {
		if ra := rb.RecurrentApplication(app); ra != nil {
			return ra.Spec, true
		}
	}
	return bricks.RecurrentSpec{}, false
}
