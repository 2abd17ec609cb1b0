// Package clitest holds test helpers shared by the two commands' tests: every form of a
// DATABASE_URL that carries a password, and a PostgreSQL server that refuses every password.
package clitest

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Marker is part of every password DSNForms uses: output containing it leaked (part of) one.
const Marker = "S3cret"

// DSNForm is one spelling of a database URL with a password in it.
type DSNForm struct {
	Name     string
	DSN      string
	Password string // as PostgreSQL receives it (decoded)
	Valid    bool   // pgx parses it; errors should then name HostPort
	HostPort string
}

// DSNForms returns every form libpq and pgx accept for a password, pointing at host:port, user and
// database, plus two that pgx refuses (its own parse errors must not show the password either).
func DSNForms(host string, port int, user, database string) []DSNForm {
	hp := net.JoinHostPort(host, strconv.Itoa(port))
	p := strconv.Itoa(port)
	return []DSNForm{
		{"URLUserinfo", fmt.Sprintf("postgres://%s:%sUserinfo@%s/%s?sslmode=disable", user, Marker, hp, database),
			Marker + "Userinfo", true, hp},
		{"URLUserinfoEncoded", fmt.Sprintf("postgresql://%s:p%%40ss%%2Fw%%3Ard%%20%s@%s/%s?sslmode=disable", user, Marker, hp, database),
			"p@ss/w:rd " + Marker, true, hp},
		{"URLQuery", fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable&password=%sQuery", user, hp, database, Marker),
			Marker + "Query", true, hp},
		{"KeywordValue", fmt.Sprintf("host=%s port=%s user=%s password=%sKV dbname=%s sslmode=disable", host, p, user, Marker, database),
			Marker + "KV", true, hp},
		{"KeywordValueQuoted", fmt.Sprintf("host=%s port=%s user=%s password='pa ss %s' dbname=%s sslmode=disable", host, p, user, Marker, database),
			"pa ss " + Marker, true, hp},
		{"KeywordValueSpacedEscaped", fmt.Sprintf(`host=%s port=%s user=%s password = 'it\'s %s' dbname=%s sslmode=disable`, host, p, user, Marker, database),
			"it's " + Marker, true, hp},
		{"KeywordValueUnparsable", fmt.Sprintf(`host=%s port=notaport user=%s password = 'broken %s' dbname=%s`, host, user, Marker, database),
			"broken " + Marker, false, hp},
		{"URLUnparsable", fmt.Sprintf("postgres://%s:%sBadURL@%s:notaport/%s", user, Marker, host, database),
			Marker + "BadURL", false, hp},
	}
}

// RefusingServer listens on 127.0.0.1 and answers every PostgreSQL connection with a cleartext
// password request, then "password authentication failed" (SQLSTATE 28P01): the wrong-password
// start-up the shared dev stack (trust authentication) cannot stage. It returns its port.
func RefusingServer(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go refuse(c)
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func refuse(c net.Conn) {
	defer c.Close()
	b := pgproto3.NewBackend(c, c)
	for {
		m, err := b.ReceiveStartupMessage()
		if err != nil {
			return
		}
		switch m.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			if _, err := c.Write([]byte("N")); err != nil {
				return
			}
			continue
		case *pgproto3.StartupMessage:
		default:
			return
		}
		break
	}
	b.Send(&pgproto3.AuthenticationCleartextPassword{})
	if b.Flush() != nil {
		return
	}
	if err := b.SetAuthType(pgproto3.AuthTypeCleartextPassword); err != nil {
		return
	}
	if _, err := b.Receive(); err != nil && !errors.Is(err, net.ErrClosed) {
		return
	}
	b.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: "password authentication failed for user"})
	_ = b.Flush()
}

// UnreachablePort returns a 127.0.0.1 port nothing listens on (bound, then closed).
func UnreachablePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}
