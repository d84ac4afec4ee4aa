package checkpoint

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/blocks-go/blocks/nd/npy"
)

// The whole-file encoder this package had before the streamed one (kept
// in the tests only): the streamed file must have its bytes.

func encodeNPZWholeFile(arrays []Named) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	seen := map[string]bool{}
	for _, na := range arrays {
		if seen[na.Name] {
			return nil, fmt.Errorf("npz: the name %q is used twice", na.Name)
		}
		seen[na.Name] = true
		data, err := npy.Encode(na.Array)
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", na.Name, err)
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: na.Name + ".npy", Method: zip.Store, Modified: npzTime})
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", na.Name, err)
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	return buf.Bytes(), nil
}

// encodeWholeFile is the former Encode.
func (c *Checkpoint) encodeWholeFile() ([]byte, error) {
	var members []member
	for i := range c.Run.Scripts {
		s := &c.Run.Scripts[i]
		s.Member = fmt.Sprintf("%s%03d_%s", scriptPrefix, i, filepath.Base(s.Path))
		members = append(members, member{s.Member, s.Source})
	}
	cfg, err := json.MarshalIndent(c.Run, "", " ")
	if err != nil {
		return nil, fmt.Errorf("checkpoint: config: %w", err)
	}
	params, err := encodeNPZWholeFile(c.Parameters)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: parameters: %w", err)
	}
	alg, err := encodeNPZWholeFile(c.AlgorithmState)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: algorithm state: %w", err)
	}
	it, err := json.Marshal(c.Iteration)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: iteration state: %w", err)
	}
	lg, err := json.Marshal(c.Log)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: log: %w", err)
	}
	members = append(members, member{MemberConfig, cfg}, member{MemberParameters, params},
		member{MemberAlgorithmState, alg}, member{MemberIterationState, it}, member{MemberLog, lg})

	m := &c.Manifest
	m.Format, m.FormatVersion = FormatName, FormatVersion
	if m.ProjectVersion == "" {
		m.ProjectVersion = ProjectVersion
	}
	if m.Created == "" {
		m.Created = time.Now().UTC().Format(time.RFC3339Nano)
	}
	m.Members = nil
	for _, mb := range members {
		sum := sha256.Sum256(mb.data)
		m.Members = append(m.Members, Member{Name: mb.name, Size: int64(len(mb.data)), SHA256: hex.EncodeToString(sum[:])})
	}
	man, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, fmt.Errorf("checkpoint: manifest: %w", err)
	}
	sum := sha256.Sum256(man)
	all := append([]member{{MemberManifest, man}}, members...)
	all = append(all, member{MemberChecksum, []byte(hex.EncodeToString(sum[:]) + "\n")})

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, mb := range all {
		hdr := &tar.Header{Name: mb.name, Mode: 0o644, Size: int64(len(mb.data)), ModTime: npzTime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("checkpoint: %s: %w", mb.name, err)
		}
		if _, err := tw.Write(mb.data); err != nil {
			return nil, fmt.Errorf("checkpoint: %s: %w", mb.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return buf.Bytes(), nil
}
