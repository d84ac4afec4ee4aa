package fuel

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/nd/npy"
	"github.com/blocks-go/blocks/starlib"
)

// Module hashlib: Python's hashlib constructors Fuel's tests and
// downloaders use to check files and arrays.
//
//	md5(data=b""), sha1(data=b""), sha256(data=b""), sha512(data=b"")
//	new(name, data=b"")
//	    a hash object: update(data), digest() (bytes), hexdigest() (a
//	    string), copy(), name, digest_size, block_size
//
// data is bytes or an ndarray (its elements in C order, little-endian,
// as numpy's buffer gives them on this machine); a str is refused as in
// Python ("Strings must be encoded before hashing": b"..." or
// bytes(s)).
func hashlibModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "hashlib", Members: starlark.StringDict{
		"md5":    starlib.NewBuiltin("md5", hashConstructor("md5")),
		"sha1":   starlib.NewBuiltin("sha1", hashConstructor("sha1")),
		"sha256": starlib.NewBuiltin("sha256", hashConstructor("sha256")),
		"sha512": starlib.NewBuiltin("sha512", hashConstructor("sha512")),
		"new":    starlib.NewBuiltin("new", hashNew),
	}})
	return
}

var hashMakers = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New,
}

func hashConstructor(name string) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var data starlark.Value = starlark.Bytes("")
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data?", &data); err != nil {
			return nil, err
		}
		return newHash(b.Name(), name, data)
	}
}

func hashNew(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var data starlark.Value = starlark.Bytes("")
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "data?", &data); err != nil {
		return nil, err
	}
	if _, ok := hashMakers[name]; !ok {
		return nil, fmt.Errorf("new: ValueError: unsupported hash type %s (md5, sha1, sha256 or sha512)", name)
	}
	return newHash(b.Name(), name, data)
}

func newHash(fn, name string, data starlark.Value) (starlark.Value, error) {
	h := &Hash{name: name, h: hashMakers[name]()}
	if err := h.write(fn, data); err != nil {
		return nil, err
	}
	return h, nil
}

// Hash is a hashlib hash object.
type Hash struct {
	name string
	h    hash.Hash
}

var _ starlark.HasAttrs = (*Hash)(nil)

func (h *Hash) String() string        { return fmt.Sprintf("<%s HASH object>", h.name) }
func (h *Hash) Type() string          { return "HASH" }
func (h *Hash) Freeze()               {}
func (h *Hash) Truth() starlark.Bool  { return true }
func (h *Hash) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: HASH") }
func (h *Hash) AttrNames() []string {
	return []string{"block_size", "copy", "digest", "digest_size", "hexdigest", "name", "update"}
}

func (h *Hash) Attr(name string) (starlark.Value, error) {
	switch name {
	case "name":
		return starlark.String(h.name), nil
	case "digest_size":
		return starlark.MakeInt(h.h.Size()), nil
	case "block_size":
		return starlark.MakeInt(h.h.BlockSize()), nil
	case "update":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var data starlark.Value
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data", &data); err != nil {
				return nil, err
			}
			return starlark.None, h.write(b.Name(), data)
		}), nil
	case "digest", "hexdigest":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			sum := h.h.Sum(nil)
			if b.Name() == "digest" {
				return starlark.Bytes(sum), nil
			}
			return starlark.String(hex.EncodeToString(sum)), nil
		}), nil
	case "copy":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			c := &Hash{name: h.name, h: hashMakers[h.name]()}
			// The standard hashes can save and restore their state.
			st, err := h.h.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
			if err == nil {
				err = c.h.(interface{ UnmarshalBinary([]byte) error }).UnmarshalBinary(st)
			}
			if err != nil {
				return nil, fmt.Errorf("copy: %v", err)
			}
			return c, nil
		}), nil
	}
	return nil, nil
}

// write hashes data: bytes, or an ndarray's elements.
func (h *Hash) write(fn string, data starlark.Value) error {
	switch d := data.(type) {
	case starlark.Bytes:
		h.h.Write([]byte(d))
		return nil
	case starlark.String:
		return fmt.Errorf("%s: TypeError: Strings must be encoded before hashing (use b\"...\" or bytes(s))", fn)
	case *starlib.Array:
		b, err := npy.AppendData(nil, d.A, binary.LittleEndian)
		if err != nil {
			return fmt.Errorf("%s: %v", fn, err)
		}
		h.h.Write(b)
		return nil
	}
	return fmt.Errorf("%s: TypeError: object supporting the buffer API required (bytes or an ndarray), got %s", fn, data.Type())
}
