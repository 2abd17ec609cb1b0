package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A DATABASE_URL carries a password in any of the forms libpq and pgx accept: the userinfo of a
// URL (postgres://user:PW@host/db), a query parameter (postgres://user@host/db?password=PW, also
// sslpassword), or a keyword/value pair (host=h password=PW, password = 'pa ss', with backslash
// escapes). No log line or error may show it. The rules, used by both commands:
//
//   - never print the string: DescribeDatabase prints what pgxpool.ParseConfig parsed (user, hosts
//     and ports, database), OpenDatabase wraps errors with that description;
//   - pgx's own errors are best-effort redacted (a ParseConfigError can show a quoted password with
//     spaces around '='), so every error and every stderr byte also goes through Scrub with the
//     secrets DatabaseSecrets found in the string: ScrubError and ScrubWriter.

// redacted replaces a secret in scrubbed text.
const redacted = "xxxxx"

// DescribeDatabase says where dsn points without any secret: "user@host:port/database" (hosts
// comma-separated when there are fallbacks), or "(unparsable database URL)".
func DescribeDatabase(dsn string) string {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return "(unparsable database URL)"
	}
	return describeConfig(cfg)
}

func describeConfig(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	hosts := []string{hostPort(c.Host, c.Port)}
	for _, f := range c.Fallbacks {
		if hp := hostPort(f.Host, f.Port); !slices.Contains(hosts, hp) {
			hosts = append(hosts, hp)
		}
	}
	return fmt.Sprintf("%s@%s/%s", c.User, strings.Join(hosts, ","), c.Database)
}

func hostPort(host string, port uint16) string {
	if strings.HasPrefix(host, "/") { // a Unix socket directory
		return host + ":" + strconv.Itoa(int(port))
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(int(port))
}

// ParseDatabaseURL parses dsn with pgxpool.ParseConfig; its error names neither dsn nor any
// secret in it.
func ParseDatabaseURL(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, ScrubError(fmt.Errorf("DATABASE_URL: %w", err), DatabaseSecrets(dsn))
	}
	return cfg, nil
}

// DatabaseURL returns flag (a --database-url), or $DATABASE_URL when flag is empty, trimmed.
func DatabaseURL(getenv func(string) string, flag string) string {
	if flag = strings.TrimSpace(flag); flag != "" {
		return flag
	}
	return strings.TrimSpace(getenv("DATABASE_URL"))
}

// OpenDatabase is the one database opener of the commands: it opens a pool at dsn (DatabaseURL)
// with room for at least minConns connections (more if the URL's pool_max_conns says so) and
// checks within 10 s that the database answers. An empty dsn is a usage error. Errors say where
// it tried (DescribeDatabase), never the string or its password: every one goes through
// ScrubError.
func OpenDatabase(ctx context.Context, dsn string, minConns int32) (*pgxpool.Pool, error) {
	if dsn == "" {
		return nil, fmt.Errorf("%w: DATABASE_URL is not set (or pass --database-url)", ErrUsage)
	}
	cfg, err := ParseDatabaseURL(dsn)
	if err != nil {
		return nil, err
	}
	secrets := DatabaseSecrets(dsn)
	where := describeConfig(cfg)
	cfg.MaxConns = max(cfg.MaxConns, minConns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, ScrubError(fmt.Errorf("open database %s: %w", where, err), secrets)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, ScrubError(fmt.Errorf("connect to database %s: %w", where, err), secrets)
	}
	return pool, nil
}

// DatabaseSecrets returns the passwords (password, sslpassword) found in dsn, in every spelling
// they may be printed in: as written, decoded, percent-encoded, JSON- and Go-quoted. It parses
// leniently, so it also finds them in strings pgx refuses.
func DatabaseSecrets(dsn string) []string {
	var raw []string
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		raw = urlSecrets(dsn)
	} else {
		raw = keywordValueSecrets(dsn)
	}
	if cfg, err := pgxpool.ParseConfig(dsn); err == nil {
		raw = append(raw, cfg.ConnConfig.Password)
	}
	var out []string
	for _, s := range raw {
		if s == "" {
			continue
		}
		js, _ := json.Marshal(s)
		for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s), url.UserPassword("", s).String()[1:],
			string(js[1 : len(js)-1]), strconv.Quote(s)[1 : len(strconv.Quote(s))-1]} {
			if v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	// Longest first, so that a secret containing another is replaced whole.
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// urlSecrets finds the userinfo password and the password/sslpassword query values of a URL,
// raw and decoded, without needing the URL to be valid.
func urlSecrets(dsn string) []string {
	var out []string
	add := func(v string) {
		out = append(out, v)
		if d, err := url.PathUnescape(v); err == nil {
			out = append(out, d)
		}
		if d, err := url.QueryUnescape(v); err == nil {
			out = append(out, d)
		}
	}
	rest := dsn[strings.Index(dsn, "://")+3:]
	authority, query := rest, ""
	if i := strings.IndexAny(rest, "?"); i >= 0 {
		authority, query = rest[:i], rest[i+1:]
	}
	if i := strings.IndexByte(authority, '/'); i >= 0 && !strings.Contains(authority[i:], "@") {
		authority = authority[:i]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		if colon := strings.IndexByte(authority[:at], ':'); colon >= 0 {
			add(authority[colon+1 : at])
		}
	}
	if i := strings.IndexByte(query, '#'); i >= 0 {
		query = query[:i]
	}
	for _, kv := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
		k, v, _ := strings.Cut(kv, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if k = strings.ToLower(strings.TrimSpace(k)); k == "password" || k == "sslpassword" {
			add(v)
		}
	}
	return out
}

// kvPassword is the fallback when a keyword/value string cannot be tokenised.
var kvPassword = regexp.MustCompile(`(?i)password\s*=\s*('(?:[^'\\]|\\.)*'?|\S+)`)

// keywordValueSecrets finds the password and sslpassword values of a keyword/value string the
// way libpq reads them (spaces around '=', single quotes, backslash escapes), raw and unescaped.
func keywordValueSecrets(s string) []string {
	var out []string
	for _, m := range kvPassword.FindAllStringSubmatch(s, -1) {
		v := strings.Trim(m[1], "'")
		out = append(out, v, unescapeKV(v))
	}
	const space = " \t\n\r\v\f"
	s = strings.TrimLeft(s, space)
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			break
		}
		key := strings.ToLower(strings.Trim(s[:eq], space))
		s = strings.TrimLeft(s[eq+1:], space)
		var val string
		if strings.HasPrefix(s, "'") {
			s = s[1:]
			end := 0
			for ; end < len(s) && s[end] != '\''; end++ {
				if s[end] == '\\' {
					end++
				}
			}
			end = min(end, len(s))
			val, s = s[:end], s[min(end+1, len(s)):]
		} else {
			end := 0
			for ; end < len(s) && !strings.ContainsRune(space, rune(s[end])); end++ {
				if s[end] == '\\' {
					end++
				}
			}
			end = min(end, len(s))
			val, s = s[:end], s[end:]
		}
		s = strings.TrimLeft(s, space)
		if key == "password" || key == "sslpassword" {
			out = append(out, val, unescapeKV(val))
		}
	}
	return out
}

func unescapeKV(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Scrub replaces every secret in s by xxxxx.
func Scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, redacted)
		}
	}
	return s
}

// ScrubError returns err with every secret scrubbed from its text; errors.Is and errors.As still
// see the original chain (ErrUsage keeps its exit status). nil stays nil.
func ScrubError(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	return &scrubbedError{err: err, secrets: secrets}
}

type scrubbedError struct {
	err     error
	secrets []string
}

func (e *scrubbedError) Error() string { return Scrub(e.err.Error(), e.secrets) }
func (e *scrubbedError) Unwrap() error { return e.err }

// ScrubWriter returns w scrubbing secrets from every Write: for stderr, where the logs go (slog
// writes each record in one Write). A secret split across two Writes is not caught, which is why
// the messages themselves never contain the string in the first place.
func ScrubWriter(w io.Writer, secrets []string) io.Writer {
	if len(secrets) == 0 {
		return w
	}
	return &scrubWriter{w: w, secrets: secrets}
}

type scrubWriter struct {
	w       io.Writer
	secrets []string
}

func (s *scrubWriter) Write(p []byte) (int, error) {
	text := string(p)
	clean := Scrub(text, s.secrets)
	if clean == text {
		return s.w.Write(p)
	}
	if _, err := io.WriteString(s.w, clean); err != nil {
		return 0, err
	}
	return len(p), nil
}

// DatabaseSecretsFrom returns the secrets of every database URL a command may use: $DATABASE_URL
// and any --database-url flag in args.
func DatabaseSecretsFrom(getenv func(string) string, args []string) []string {
	var out []string
	add := func(dsn string) {
		for _, s := range DatabaseSecrets(strings.TrimSpace(dsn)) {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	add(getenv("DATABASE_URL"))
	for i, a := range args {
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "database-url" {
			continue
		}
		if hasVal {
			add(val)
		} else if i+1 < len(args) {
			add(args[i+1])
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}
