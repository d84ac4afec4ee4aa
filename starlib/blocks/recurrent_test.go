package blocks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRecurrentPositionalOrder checks recurrentPositional against
// Blocks' own signatures (../shared/reference/api/blocks-api.json).
func TestRecurrentPositionalOrder(t *testing.T) {
	shared := os.Getenv("BLOCKS_SHARED")
	if shared == "" {
		shared = filepath.Join("..", "..", "..", "shared")
	}
	data, err := os.ReadFile(filepath.Join(shared, "reference", "api", "blocks-api.json"))
	if err != nil {
		t.Fatalf("Blocks' API inventory: %v (set BLOCKS_SHARED)", err)
	}
	var api struct {
		Modules []struct {
			Module  string `json:"module"`
			Classes []struct {
				Name    string `json:"name"`
				Methods []struct {
					Name   string `json:"name"`
					Params []struct {
						Name string `json:"name"`
					} `json:"params"`
				} `json:"methods"`
			} `json:"classes"`
		} `json:"modules"`
	}
	if err := json.Unmarshal(data, &api); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, m := range api.Modules {
		for _, c := range m.Classes {
			for _, meth := range c.Methods {
				want, ok := recurrentPositional[c.Name+"."+meth.Name]
				if !ok {
					continue
				}
				found++
				var got []string
				for _, p := range meth.Params {
					if p.Name != "self" && p.Name != "application_call" {
						got = append(got, p.Name)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s.%s: Blocks' positional order is %v, the table says %v", c.Name, meth.Name, got, want)
				}
			}
		}
	}
	if found != len(recurrentPositional) {
		t.Errorf("found %d of the %d applications in Blocks' API", found, len(recurrentPositional))
	}
}
