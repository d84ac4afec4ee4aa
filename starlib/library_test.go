package starlib_test

import (
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// testLibrary is the library the tests' scripts load.
func testLibrary() *starlib.Library { return all.Library() }
