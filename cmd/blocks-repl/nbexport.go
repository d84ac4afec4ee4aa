package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// nbexport writes a notebook's code cells as a script (docs/jupyter.md):
// the cells that ran without error, in the order they ran, as the REPL's
// :save writes the inputs that ran, so that blocks-repl run replays the
// notebook bit for bit. run accepts a notebook directly (the same script).

func init() {
	registerCommand(command{
		name: "nbexport",
		usage: `  blocks-repl nbexport NOTEBOOK.ipynb      write the notebook's cells that ran, in order, as a
                                           script (blocks-repl run replays it; run also takes
                                           the .ipynb itself)
`,
		run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			if len(args) != 1 || strings.HasPrefix(args[0], "-") {
				return badUsage(stderr, "nbexport", fmt.Errorf("want one NOTEBOOK.ipynb, got %q", strings.Join(args, " ")))
			}
			b, err := os.ReadFile(args[0])
			if err != nil {
				fmt.Fprintf(stderr, "blocks-repl nbexport: %v\n", err)
				return 1
			}
			src, err := notebookScript(args[0], b)
			if err != nil {
				fmt.Fprintf(stderr, "blocks-repl nbexport: %v\n", err)
				return 1
			}
			io.WriteString(stdout, src)
			return 0
		},
	})
}

// notebookCell is the part of an nbformat 4 cell that export reads.
type notebookCell struct {
	CellType       string          `json:"cell_type"`
	Source         json.RawMessage `json:"source"`
	ExecutionCount *int            `json:"execution_count"`
	Outputs        []struct {
		OutputType string `json:"output_type"`
	} `json:"outputs"`
}

// maxNotebook bounds the notebook read (outputs, images included).
const maxNotebook = 256 << 20

// notebookScript is the script of a notebook (name for errors): when any
// code cell has run, the cells that ran without an error output, ordered
// by execution count (the order they ran); for a notebook never run, all
// its code cells in order. Each cell is headed by a comment "# In[N]:";
// cells of the REPL's :commands become comments.
func notebookScript(name string, b []byte) (string, error) {
	if len(b) > maxNotebook {
		return "", fmt.Errorf("%s: %d bytes, more than the %d a notebook may have", name, len(b), maxNotebook)
	}
	var nb struct {
		NBFormat *int           `json:"nbformat"`
		Cells    []notebookCell `json:"cells"`
		Metadata struct {
			LanguageInfo struct {
				Name string `json:"name"`
			} `json:"language_info"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		return "", fmt.Errorf("%s: not a Jupyter notebook (JSON): %w", name, err)
	}
	if nb.NBFormat == nil || *nb.NBFormat != 4 {
		return "", fmt.Errorf("%s: want a notebook of nbformat 4", name)
	}
	if l := nb.Metadata.LanguageInfo.Name; l != "" && l != "starlark" {
		return "", fmt.Errorf("%s: a %s notebook, want a Starlark one (the Blocks (Starlark) kernel's)", name, l)
	}
	type ran struct {
		count int
		index int
		src   string
	}
	var cells []ran
	anyRan := false
	for _, c := range nb.Cells {
		if c.CellType == "code" && c.ExecutionCount != nil {
			anyRan = true
		}
	}
	for i, c := range nb.Cells {
		if c.CellType != "code" {
			continue
		}
		src, err := cellSource(c.Source)
		if err != nil {
			return "", fmt.Errorf("%s: cell %d: %w", name, i+1, err)
		}
		if anyRan {
			if c.ExecutionCount == nil {
				continue
			}
			failed := false
			for _, o := range c.Outputs {
				if o.OutputType == "error" {
					failed = true
				}
			}
			if failed {
				continue
			}
			cells = append(cells, ran{*c.ExecutionCount, i, src})
		} else {
			cells = append(cells, ran{i + 1, i, src})
		}
	}
	sort.SliceStable(cells, func(a, b int) bool { return cells[a].count < cells[b].count })
	var out strings.Builder
	fmt.Fprintf(&out, "# Exported from the notebook %s: its code cells that ran without error, in the\n# order they ran; run with: blocks-repl run FILE\n", name)
	for _, c := range cells {
		fmt.Fprintf(&out, "\n# In[%d]:\n", c.count)
		src := strings.TrimRight(c.src, "\n")
		if strings.HasPrefix(strings.TrimSpace(src), ":") {
			for _, l := range strings.Split(src, "\n") {
				out.WriteString("# " + l + "\n")
			}
			continue
		}
		out.WriteString(src + "\n")
	}
	return out.String(), nil
}

// cellSource is a cell's source: a string or a list of strings.
func cellSource(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []string
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("source: want a string or a list of strings")
	}
	return strings.Join(parts, ""), nil
}
