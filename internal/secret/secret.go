// Package secret keeps passwords out of everything calibra records: one
// redaction for every place a DSN is written (results.json, study.yaml,
// plan output, logs, reports, errors).
package secret

import (
	"net/url"
	"regexp"
)

var (
	kvPassword  = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)`)
	urlPassword = regexp.MustCompile(`(://[^:/@]*:)[^@]*@`)
)

// RedactDSN hides the password of a URL or key=value DSN.
func RedactDSN(dsn string) string {
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
