package starlib

// testLibrary is the library the tests' scripts load.
func testLibrary() *Library {
	l, err := NewLibrary(Registered()...)
	if err != nil {
		panic(err)
	}
	return l
}
