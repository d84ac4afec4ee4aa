package blocks

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/internal/fixtures"
)

// TestRecurrentPositionalOrder checks recurrentPositional against
// Blocks' own signatures (internal/fixtures' api/blocks-api.json).
func TestRecurrentPositionalOrder(t *testing.T) {
	data, err := fixtures.Read("api/blocks-api.json")
	if err != nil {
		t.Fatal(err)
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
