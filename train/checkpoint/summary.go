package checkpoint

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxManifest bounds the manifest member: a checkpoint's lists a few
// dozen members in a few kilobytes.
const maxManifest = 1 << 20

// readManifestHead reads the first member of the tar stream r, which must
// be the manifest of this format (at most maxManifest bytes): a foreign
// tar file is refused after its first header, unread.
func readManifestHead(tr *tar.Reader) (*Manifest, []byte, error) {
	hdr, err := tr.Next()
	if err != nil {
		return nil, nil, corrupt("reading the tar archive (not a tar file, or truncated?): %v", err)
	}
	if hdr.Name != MemberManifest || hdr.Typeflag != tar.TypeReg {
		return nil, nil, corrupt("the first member is %q, not %s", hdr.Name, MemberManifest)
	}
	if hdr.Size < 0 || hdr.Size > maxManifest {
		return nil, nil, corrupt("the manifest declares %d bytes (at most %d)", hdr.Size, maxManifest)
	}
	b := make([]byte, hdr.Size)
	if _, err := io.ReadFull(tr, b); err != nil {
		return nil, nil, corrupt("reading member %q (truncated?): %v", hdr.Name, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, corrupt("the manifest is not valid JSON: %v", err)
	}
	if m.Format != FormatName {
		return nil, nil, corrupt("the manifest's format is %q, not %q", m.Format, FormatName)
	}
	return &m, b, nil
}

// checkHead refuses, before the file is read whole, a file that is not a
// checkpoint of this format (its first member is not the manifest) or that
// holds far more than its manifest lists (a checkpoint's tar headers and
// padding take under 3 KiB a member).
func checkHead(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	m, man, err := readManifestHead(tar.NewReader(f))
	if err != nil {
		return err
	}
	listed := int64(len(man)) + 64<<10
	for _, mb := range m.Members {
		if mb.Size < 0 || mb.Size > st.Size() {
			return corrupt("member %q declares %d bytes, more than the whole file holds (%d)", mb.Name, mb.Size, st.Size())
		}
		listed += mb.Size + 3<<10 + int64(len(mb.Name))
	}
	if st.Size() > listed {
		return corrupt("the file has %d bytes, its manifest lists %d", st.Size(), listed)
	}
	return nil
}

// ReadSummary reads what a list of runs needs from the checkpoint at
// path: the manifest, the run's config and scripts, and its log. Each of
// those members must have the size and SHA-256 the manifest gives, and
// the manifest its checksum; the other members (the parameters, the
// algorithm and iteration states) are skipped unread, their headers
// checked against the manifest. At most limit bytes are read: a foreign
// tar file is refused after its first header, and a checkpoint whose
// config, scripts and log together exceed limit is refused before they
// are read. The result has no Parameters, AlgorithmState or Iteration.
func ReadSummary(path string, limit int64) (*Checkpoint, error) {
	c, err := readSummary(path, limit)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return c, nil
}

func readSummary(path string, limit int64) (*Checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, corrupt("not a regular file")
	}
	tr := tar.NewReader(f) // an *os.File: members skipped are seeked past
	m, man, err := readManifestHead(tr)
	if err != nil {
		return nil, err
	}
	if m.FormatVersion != FormatVersion {
		return nil, corrupt("the checkpoint has format version %d; this blocks-repl reads version %d only", m.FormatVersion, FormatVersion)
	}
	wanted := func(name string) bool {
		return name == MemberConfig || name == MemberLog || strings.HasPrefix(name, scriptPrefix)
	}
	var total int64
	for _, mb := range m.Members {
		if wanted(mb.Name) {
			if mb.Size < 0 || mb.Size > limit-total {
				return nil, corrupt("its config, scripts and log take more than %d bytes", limit)
			}
			total += mb.Size
		}
	}
	byName := map[string][]byte{}
	for i := 0; ; i++ {
		hdr, err := tr.Next()
		if err != nil {
			return nil, corrupt("reading the tar archive (truncated?): %v", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, corrupt("member %q is not a regular file", hdr.Name)
		}
		if i == len(m.Members) {
			if hdr.Name != MemberChecksum || hdr.Size > 1024 {
				return nil, corrupt("member %q of %d bytes is not the manifest's checksum", hdr.Name, hdr.Size)
			}
			b := make([]byte, hdr.Size)
			if _, err := io.ReadFull(tr, b); err != nil {
				return nil, corrupt("reading member %q (truncated?): %v", hdr.Name, err)
			}
			sum := sha256.Sum256(man)
			if strings.TrimSpace(string(b)) != hex.EncodeToString(sum[:]) {
				return nil, corrupt("the manifest does not match its checksum (the file was modified)")
			}
			break
		}
		want := m.Members[i]
		if hdr.Name != want.Name || hdr.Size != want.Size {
			return nil, corrupt("member %d is %q of %d bytes, the manifest says %q of %d", i+1, hdr.Name, hdr.Size, want.Name, want.Size)
		}
		if !wanted(hdr.Name) {
			continue
		}
		b := make([]byte, hdr.Size)
		if _, err := io.ReadFull(tr, b); err != nil {
			return nil, corrupt("reading member %q (truncated?): %v", hdr.Name, err)
		}
		if s := sha256.Sum256(b); hex.EncodeToString(s[:]) != want.SHA256 {
			return nil, corrupt("member %s does not match its SHA-256 in the manifest (the file was modified)", hdr.Name)
		}
		byName[hdr.Name] = b
	}
	c := &Checkpoint{Manifest: *m}
	b, ok := byName[MemberConfig]
	if !ok {
		return nil, corrupt("member %s is missing", MemberConfig)
	}
	if err := json.Unmarshal(b, &c.Run); err != nil {
		return nil, corrupt("%s: %v", MemberConfig, err)
	}
	if len(c.Run.Scripts) == 0 {
		return nil, corrupt("the checkpoint holds no script")
	}
	for i := range c.Run.Scripts {
		s := &c.Run.Scripts[i]
		if s.Source, ok = byName[s.Member]; !ok {
			return nil, corrupt("member %s is missing", s.Member)
		}
	}
	if b, ok = byName[MemberLog]; !ok {
		return nil, corrupt("member %s is missing", MemberLog)
	}
	if err := json.Unmarshal(b, &c.Log); err != nil {
		return nil, corrupt("%s: %v", MemberLog, err)
	}
	if _, err := c.Log.Decode(); err != nil {
		return nil, corrupt("%s: %v", MemberLog, err)
	}
	return c, nil
}
