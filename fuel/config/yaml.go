package config

import (
	"fmt"
	"strings"
)

// YAMLValue is a top-level value of a configuration file: a scalar or a
// list of scalars (as written, quotes removed).
type YAMLValue struct {
	Scalar string
	List   []string
	IsList bool
}

// ParseYAML reads the subset of YAML a .fuelrc uses: top-level
// `key: value` lines, `#` comments, single- or double-quoted scalars, flow
// lists `[a, b]` and block lists of indented `- item` lines under a
// `key:` line. Anything else is an error naming the line.
func ParseYAML(text string) (map[string]YAMLValue, error) {
	out := map[string]YAMLValue{}
	var listKey string // the key whose block list is being read
	for i, raw := range strings.Split(text, "\n") {
		lineNo := i + 1
		line := strings.TrimRight(stripComment(raw), " \t\r")
		if strings.TrimSpace(line) == "" || line == "---" {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "- ") || trimmed == "-" {
			if listKey == "" {
				return nil, fmt.Errorf("line %d: list item outside a list: %q", lineNo, raw)
			}
			item, err := unquote(strings.TrimSpace(strings.TrimPrefix(trimmed, "-")))
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			v := out[listKey]
			v.List = append(v.List, item)
			out[listKey] = v
			continue
		}
		if indented {
			return nil, fmt.Errorf("line %d: unexpected indentation (only top-level `key: value` lines and `- item` lists are understood): %q", lineNo, raw)
		}
		listKey = ""
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want `key: value`, got %q", lineNo, raw)
		}
		key = strings.TrimSpace(key)
		rest = strings.TrimSpace(rest)
		if key == "" {
			return nil, fmt.Errorf("line %d: empty key: %q", lineNo, raw)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("line %d: %s given twice", lineNo, key)
		}
		switch {
		case rest == "":
			// Either a block list follows or the value is null.
			out[key] = YAMLValue{IsList: true}
			listKey = key
		case strings.HasPrefix(rest, "["):
			if !strings.HasSuffix(rest, "]") {
				return nil, fmt.Errorf("line %d: unterminated list: %q", lineNo, raw)
			}
			v := YAMLValue{IsList: true}
			inner := strings.TrimSpace(rest[1 : len(rest)-1])
			if inner != "" {
				for _, item := range strings.Split(inner, ",") {
					s, err := unquote(strings.TrimSpace(item))
					if err != nil {
						return nil, fmt.Errorf("line %d: %w", lineNo, err)
					}
					v.List = append(v.List, s)
				}
			}
			out[key] = v
		default:
			s, err := unquote(rest)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			out[key] = YAMLValue{Scalar: s}
		}
	}
	return out, nil
}

// stripComment removes a `#` comment that starts a line or follows a
// space, outside quotes.
func stripComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i]
		}
	}
	return line
}

func unquote(s string) (string, error) {
	if len(s) >= 1 && (s[0] == '"' || s[0] == '\'') {
		if len(s) < 2 || s[len(s)-1] != s[0] {
			return "", fmt.Errorf("unterminated quoted string %s", s)
		}
		return s[1 : len(s)-1], nil
	}
	return s, nil
}
