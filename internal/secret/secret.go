// Package secret keeps passwords out of everything calibra records: one
// redaction for every place a DSN is written (results.json, study.yaml,
// plan output, logs, reports, errors).
package secret

import (
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

var (
	kvPassword  = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)`)
	urlPassword = regexp.MustCompile(`(://[^:/@]*:)[^@]*@`)
)

var (
	mu    sync.Mutex
	forms []func(string) (string, bool)
)

// AddDSNForm adds the redaction of a DSN form of an engine's own driver,
// neither a URL nor key=value (engine.Register adds each engine's).
func AddDSNForm(redact func(dsn string) (string, bool)) {
	mu.Lock()
	defer mu.Unlock()
	forms = append(forms, redact)
}

// RedactDSN hides the password of a URL, key=value or engine driver's DSN.
func RedactDSN(dsn string) string {
	if !strings.Contains(dsn, "://") {
		// url.Parse would take a driver's form for a URL whose scheme is
		// the user.
		mu.Lock()
		defer mu.Unlock()
		for _, redact := range forms {
			if out, ok := redact(dsn); ok {
				return out
			}
		}
	}
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	// Not a URL we can parse (or key=value): mask anything password-shaped.
	return kvPassword.ReplaceAllString(urlPassword.ReplaceAllString(dsn, "${1}xxxxx@"), "${1}xxxxx")
}

// kvDSN is libpq's key=value form: one or more key=value pairs, a value
// bare or in single quotes.
var kvDSN = regexp.MustCompile(`^\s*\w+\s*=\s*(?:'(?:[^'\\]|\\.)*'|[^\s']+)(?:\s+\w+\s*=\s*(?:'(?:[^'\\]|\\.)*'|[^\s']+))*\s*$`)

// IsDSN says whether s has the shape of a DSN calibra takes: a URL with a
// scheme (postgres://, mysql://...) or key=value pairs. What comes from a
// file and has neither shape is refused without being quoted.
func IsDSN(s string) bool {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return false
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && strings.Contains(s, "://") {
		return true
	}
	return kvDSN.MatchString(s)
}

// Exposed reports whether the file at path, which holds a secret, is
// readable by its group or by others, and its permission bits; a file
// that cannot be read is not exposed (reading it says why).
func Exposed(path string) (fs.FileMode, bool) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return 0, false
	}
	return st.Mode().Perm(), st.Mode().Perm()&0o044 != 0
}

// KeyMaterial marks a private key in PEM, whatever its kind.
const KeyMaterial = "PRIVATE KEY-----"

// Readable lists the files under root that an account other than their
// owner can read, reaching them from root (every directory on the way,
// root included, searchable by group or others, the file readable by
// them), and that hold one of secrets (KeyMaterial among them to look for
// key material), each as "path holds secret". It is the sweep the tests
// make of a run directory and a storage path: nothing another account can
// read names what calibra keeps secret.
func Readable(root string, secrets ...string) ([]string, error) {
	var found []string
	err := walkReadable(root, func(path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		for _, s := range secrets {
			if s != "" && strings.Contains(string(b), s) {
				found = append(found, path+" holds "+s)
			}
		}
	})
	return found, err
}

func walkReadable(dir string, file func(path string)) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o011 == 0 {
		return nil // no other account enters it
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := dir + string(os.PathSeparator) + e.Name()
		switch {
		case e.IsDir():
			if err := walkReadable(path, file); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if _, exposed := Exposed(path); exposed {
				file(path)
			}
		}
	}
	return nil
}
