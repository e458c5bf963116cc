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
