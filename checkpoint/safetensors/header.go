package safetensors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// entry is one tensor's header record, checked for syntax but not yet for layout.
type entry struct {
	name       string
	dtype      DType
	shape      []int
	begin, end int64
}

// parseHeader parses the JSON header token by token, so that duplicate keys,
// unknown fields and non-string metadata are rejected (encoding/json's
// Unmarshal would silently keep the last duplicate).
func parseHeader(b []byte) (map[string]string, []entry, error) {
	if !utf8.Valid(b) {
		return nil, nil, errors.New("header: not valid UTF-8")
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, nil, errors.New("header: does not start with '{'")
	}
	p := &parser{dec: json.NewDecoder(bytes.NewReader(b))}
	p.dec.UseNumber()
	meta := map[string]string{}
	var entries []entry
	if err := p.delim('{'); err != nil {
		return nil, nil, fmt.Errorf("header: %w", err)
	}
	seen := map[string]bool{}
	for p.dec.More() {
		key, err := p.str()
		if err != nil {
			return nil, nil, fmt.Errorf("header: %w", err)
		}
		if seen[key] {
			if key == metadataKey {
				return nil, nil, fmt.Errorf("header: duplicate %s", metadataKey)
			}
			return nil, nil, fmt.Errorf("tensor %q: duplicate name in header", key)
		}
		seen[key] = true
		if key == metadataKey {
			if meta, err = p.metadata(); err != nil {
				return nil, nil, fmt.Errorf("header: %s: %w", metadataKey, err)
			}
			continue
		}
		if key == "" {
			return nil, nil, errors.New("header: tensor with an empty name")
		}
		e, err := p.entry(key)
		if err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", key, err)
		}
		entries = append(entries, e)
	}
	if err := p.delim('}'); err != nil {
		return nil, nil, fmt.Errorf("header: %w", err)
	}
	if tok, err := p.dec.Token(); err != io.EOF {
		if err == nil {
			return nil, nil, fmt.Errorf("header: unexpected %v after the closing '}'", tok)
		}
		return nil, nil, fmt.Errorf("header: after the closing '}': %w", err)
	}
	return meta, entries, nil
}

// parser wraps a token decoder with the few expectations the header needs.
type parser struct{ dec *json.Decoder }

func (p *parser) token() (json.Token, error) {
	tok, err := p.dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return tok, err
}

// delim consumes the delimiter d.
func (p *parser) delim(d json.Delim) error {
	tok, err := p.token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("expected %q, got %v", d.String(), describe(tok))
	}
	return nil
}

// str consumes a string.
func (p *parser) str() (string, error) {
	tok, err := p.token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("expected a string, got %v", describe(tok))
	}
	return s, nil
}

// int consumes a non-negative JSON integer that fits an int64 (and an int).
func (p *parser) int() (int64, error) {
	tok, err := p.token()
	if err != nil {
		return 0, err
	}
	num, ok := tok.(json.Number)
	if !ok {
		return 0, fmt.Errorf("expected a non-negative integer, got %v", describe(tok))
	}
	v, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || v < 0 || v > math.MaxInt {
		return 0, fmt.Errorf("expected a non-negative integer, got %s", num)
	}
	return v, nil
}

// metadata consumes the "__metadata__" object of string values.
func (p *parser) metadata() (map[string]string, error) {
	if err := p.delim('{'); err != nil {
		return nil, err
	}
	meta := map[string]string{}
	for p.dec.More() {
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := meta[k]; dup {
			return nil, fmt.Errorf("duplicate key %q", k)
		}
		tok, err := p.token()
		if err != nil {
			return nil, err
		}
		v, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("key %q: value must be a string, got %v", k, describe(tok))
		}
		meta[k] = v
	}
	return meta, p.delim('}')
}

// entry consumes one tensor record {"dtype", "shape", "data_offsets"}.
func (p *parser) entry(name string) (entry, error) {
	e := entry{name: name}
	if err := p.delim('{'); err != nil {
		return e, err
	}
	seen := map[string]bool{}
	for p.dec.More() {
		field, err := p.str()
		if err != nil {
			return e, err
		}
		if seen[field] {
			return e, fmt.Errorf("duplicate field %q", field)
		}
		seen[field] = true
		switch field {
		case "dtype":
			s, err := p.str()
			if err != nil {
				return e, fmt.Errorf("dtype: %w", err)
			}
			e.dtype = DType(s)
			if err := e.dtype.Validate(); err != nil {
				return e, err
			}
		case "shape":
			if err := p.delim('['); err != nil {
				return e, fmt.Errorf("shape: %w", err)
			}
			e.shape = []int{}
			for p.dec.More() {
				d, err := p.int()
				if err != nil {
					return e, fmt.Errorf("shape: %w", err)
				}
				e.shape = append(e.shape, int(d))
			}
			if err := p.delim(']'); err != nil {
				return e, fmt.Errorf("shape: %w", err)
			}
		case "data_offsets":
			if err := p.delim('['); err != nil {
				return e, fmt.Errorf("data_offsets: %w", err)
			}
			var off [2]int64
			for i := range off {
				if off[i], err = p.int(); err != nil {
					return e, fmt.Errorf("data_offsets: %w", err)
				}
			}
			if err := p.delim(']'); err != nil {
				return e, fmt.Errorf("data_offsets: must have exactly 2 entries: %w", err)
			}
			e.begin, e.end = off[0], off[1]
		default:
			return e, fmt.Errorf("unknown field %q", field)
		}
	}
	if err := p.delim('}'); err != nil {
		return e, err
	}
	for _, f := range []string{"dtype", "shape", "data_offsets"} {
		if !seen[f] {
			return e, fmt.Errorf("missing field %q", f)
		}
	}
	return e, nil
}

// describe renders a JSON token for an error message.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case json.Delim:
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(tok)
}
