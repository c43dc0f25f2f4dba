package kaoto

import (
	"errors"
	"fmt"
	"strings"
)

// Why an image reference is refused; wrapped in manifest.ErrInvalid.
var errImage = errors.New("not an image reference the API server and the kubelet accept")

// maxImageName bounds the name part (domain and path) of a reference, as
// the container runtimes' reference grammar does.
const maxImageName = 255

// checkImage checks ref against the grammar of image references the
// kubelet's runtimes parse ([domain/]path[:tag][@digest]); the API server
// itself refuses leading or trailing whitespace. It returns nil or an
// error wrapping errImage that says what is wrong. No regular
// expressions: one pass over the bytes.
func checkImage(ref string) error {
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("%w: %q holds a space, a control character or a non-ASCII byte", errImage, ref)
		}
	}
	name, digest, hasDigest := strings.Cut(ref, "@")
	if hasDigest {
		if err := checkDigest(digest); err != nil {
			return fmt.Errorf("%w: %q: digest %v", errImage, ref, err)
		}
	}
	// A tag follows the last ':' after the last '/' (a ':' before it is a
	// registry port).
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		if err := checkTag(name[i+1:]); err != nil {
			return fmt.Errorf("%w: %q: tag %v", errImage, ref, err)
		}
		name = name[:i]
	}
	if len(name) > maxImageName {
		return fmt.Errorf("%w: %q: the name is longer than %d characters", errImage, ref, maxImageName)
	}
	path := name
	if first, rest, ok := strings.Cut(name, "/"); ok && isDomain(first) {
		if err := checkDomain(first); err != nil {
			return fmt.Errorf("%w: %q: registry %v", errImage, ref, err)
		}
		path = rest
	}
	if err := checkPath(path); err != nil {
		return fmt.Errorf("%w: %q: repository %v", errImage, ref, err)
	}
	return nil
}

// isDomain reports whether the first component of a name is a registry,
// as the runtimes decide: it holds '.' or ':', is localhost, or has
// upper-case letters (which a repository path may not).
func isDomain(s string) bool {
	return strings.ContainsAny(s, ".:") || s == "localhost" || strings.ToLower(s) != s
}

func checkDomain(s string) error {
	host, port := s, ""
	if strings.HasPrefix(s, "[") { // IPv6
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return fmt.Errorf("%q has no closing ]", s)
		}
		host, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		if host == "" || strings.Trim(host, "0123456789abcdefABCDEF:.") != "" || (s[end+1:] != "" && port == "") {
			return fmt.Errorf("%q is not an IPv6 address with an optional port", s)
		}
	} else if h, p, ok := strings.Cut(s, ":"); ok {
		host, port = h, p
		if port == "" {
			return fmt.Errorf("%q has an empty port", s)
		}
	}
	if port != "" && strings.Trim(port, "0123456789") != "" {
		return fmt.Errorf("%q: port %q is not a number", s, port)
	}
	if strings.HasPrefix(s, "[") {
		return nil
	}
	for c := range strings.SplitSeq(host, ".") {
		if c == "" || c[0] == '-' || c[len(c)-1] == '-' || strings.Trim(c, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
			return fmt.Errorf("%q: %q is not a host name component (letters, digits and inner -)", s, c)
		}
	}
	return nil
}

// checkPath checks path components: lower-case letters and digits,
// separated by '.', '_', "__" or runs of '-'.
func checkPath(path string) error {
	for c := range strings.SplitSeq(path, "/") {
		if c == "" {
			return fmt.Errorf("%q has an empty component", path)
		}
		if !isAlnum(c[0]) || !isAlnum(c[len(c)-1]) {
			return fmt.Errorf("component %q must start and end with a lower-case letter or a digit", c)
		}
		for i := 0; i < len(c); i++ {
			switch ch := c[i]; {
			case isAlnum(ch):
			case ch == '-':
				if next := c[i+1]; next != '-' && !isAlnum(next) {
					return fmt.Errorf("component %q: separators are '.', '_', \"__\" or dashes between letters and digits", c)
				}
			case ch == '.' || ch == '_':
				if next := c[i+1]; !isAlnum(next) && !(ch == '_' && next == '_' && i+2 < len(c) && isAlnum(c[i+2])) {
					return fmt.Errorf("component %q: separators are '.', '_', \"__\" or dashes between letters and digits", c)
				}
				if ch == '_' && c[i+1] == '_' {
					i++
				}
			default:
				return fmt.Errorf("component %q holds %q (lower-case letters, digits, '.', '_' and '-' only)", c, ch)
			}
		}
	}
	return nil
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// checkTag: a word character, then up to 127 word characters, '.' or '-'.
func checkTag(tag string) error {
	if tag == "" || len(tag) > 128 {
		return fmt.Errorf("%q must hold 1 to 128 characters", tag)
	}
	if !isWord(tag[0]) {
		return fmt.Errorf("%q must start with a letter, a digit or '_'", tag)
	}
	for i := 1; i < len(tag); i++ {
		if c := tag[i]; !isWord(c) && c != '.' && c != '-' {
			return fmt.Errorf("%q holds %q (letters, digits, '_', '.' and '-' only)", tag, c)
		}
	}
	return nil
}

// checkDigest: algorithm ':' at least 32 hexadecimal digits.
func checkDigest(d string) error {
	alg, hex, ok := strings.Cut(d, ":")
	if !ok || alg == "" {
		return fmt.Errorf("%q is not algorithm:hex", d)
	}
	prevSep := true
	for i := 0; i < len(alg); i++ {
		c := alg[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			prevSep = false
		case c >= '0' && c <= '9' && !prevSep:
		case (c == '+' || c == '.' || c == '-' || c == '_') && !prevSep:
			prevSep = true
		default:
			return fmt.Errorf("%q: algorithm %q is not valid", d, alg)
		}
	}
	if prevSep {
		return fmt.Errorf("%q: algorithm %q is not valid", d, alg)
	}
	if len(hex) < 32 || strings.Trim(hex, "0123456789abcdefABCDEF") != "" {
		return fmt.Errorf("%q: %q is not at least 32 hexadecimal digits", d, hex)
	}
	return nil
}
