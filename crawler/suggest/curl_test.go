package suggest

import (
	"errors"
	"net/http"
	"testing"
)

func TestParseCurl(t *testing.T) {
	for _, tc := range []struct {
		name, in          string
		method, url, body string
		header            map[string]string
	}{
		{
			name: "chrome bash, GET with -b and lowercase headers",
			in: "curl 'http://127.0.0.1:8089/api/getTeeTimeList?club=137&roundDay=2026-12-05' \\\n" +
				"  -H 'accept: application/json' \\\n  -H 'accept-language: ko-KR,ko;q=0.9' \\\n" +
				"  -b 'JSESSIONID=abc; _ga=GA1.2' \\\n  -H 'user-agent: Mozilla/5.0'",
			method: "GET", url: "http://127.0.0.1:8089/api/getTeeTimeList?club=137&roundDay=2026-12-05",
			header: map[string]string{"Accept": "application/json", "Cookie": "JSESSIONID=abc; _ga=GA1.2", "User-Agent": "Mozilla/5.0"},
		},
		{
			name: "chrome bash, --data-raw without -X is a POST",
			in: "curl 'http://h/api/v2/teetime/list' \\\r\n  -H 'content-type: application/json' \\\r\n" +
				"  --data-raw '{\"clubId\":\"137\",\"date\":\"20261205\"}'",
			method: "POST", url: "http://h/api/v2/teetime/list", body: `{"clubId":"137","date":"20261205"}`,
			header: map[string]string{"Content-Type": "application/json"},
		},
		{
			name:   "chrome $'...' quoting with escapes",
			in:     `curl 'http://h/x' --data-raw $'{"name":"\uB808\uC774\uD06C","q":"it\'s","n":"a\nb","x":"\x41"}'`,
			method: "POST", url: "http://h/x", body: "{\"name\":\"레이크\",\"q\":\"it's\",\"n\":\"a\nb\",\"x\":\"A\"}",
		},
		{
			name: "firefox, capitalised headers, -X POST, --data",
			in: "curl 'http://h/club/ajax/teeList' -X POST -H 'User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' " +
				"-H 'Accept: */*' -H 'Content-Type: application/x-www-form-urlencoded; charset=UTF-8' -H 'X-Requested-With: XMLHttpRequest' " +
				"-H 'Cookie: SIMSESS=s1-1' --data 'golfResDate=20261205&courseId=137'",
			method: "POST", url: "http://h/club/ajax/teeList", body: "golfResDate=20261205&courseId=137",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded; charset=UTF-8", "X-Requested-With": "XMLHttpRequest", "Cookie": "SIMSESS=s1-1"},
		},
		{
			name:   "double quotes, --data-binary, -XPOST attached, --url=",
			in:     `curl -XPOST --url="http://h/a?b=1" --data-binary "a=\"1\"&b=\$2" --compressed -k`,
			method: "POST", url: "http://h/a?b=1", body: `a="1"&b=$2`,
		},
		{
			name:   "several --data are joined with &, -G moves them to the query",
			in:     `curl -G 'http://h/a?x=1' -d 'y=2' --data 'z=3'`,
			method: "GET", url: "http://h/a?x=1&y=2&z=3",
		},
		{
			name:   "--cookie long form and -X get lowercase",
			in:     `curl -X get --cookie 'a=b' --header 'X-CSRF-Token: t' http://h/p`,
			method: "GET", url: "http://h/p", header: map[string]string{"Cookie": "a=b", "X-Csrf-Token": "t"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseCurl(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Method != tc.method || r.URL != tc.url || r.Body != tc.body {
				t.Errorf("got %s %s body %q; want %s %s body %q", r.Method, r.URL, r.Body, tc.method, tc.url, tc.body)
			}
			for k, v := range tc.header {
				if got := r.Header.Get(k); got != v {
					t.Errorf("header %s = %q; want %q (all: %v)", k, got, v, r.Header)
				}
			}
		})
	}
}

func TestParseCurlRejects(t *testing.T) {
	for _, in := range []string{"", "wget http://h/", "curl", "curl 'http://h/", `curl "http://h/`, "curl $'http://h/",
		"curl ftp://h/x", "curl http://h/ -H", "curl http://a/ http://b/", "curl http://h/ -H 'nocolon'"} {
		if _, err := ParseCurl(in); !errors.Is(err, ErrCurl) {
			t.Errorf("ParseCurl(%q) = %v; want ErrCurl", in, err)
		}
	}
}

func FuzzParseCurl(f *testing.F) {
	for _, s := range []string{
		"curl 'http://h/x' -H 'a: b' --data-raw $'{\\'x\\':\\u00e9}'",
		"curl http://h/ -X POST -b 'a=b' -d 'x=1' \\\n -H \"Accept: */*\"",
		`curl -G "http://h/\"" -d a=1`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseCurl(s)
		if err != nil {
			if !errors.Is(err, ErrCurl) {
				t.Fatalf("error %v does not wrap ErrCurl", err)
			}
			return
		}
		if r.Method == "" || r.URL == "" || r.Header == nil {
			t.Fatalf("incomplete request %+v", r)
		}
		if _, err := http.NewRequest(r.Method, r.URL, nil); err != nil && r.Method != "" {
			// a method with a space is refused by net/http; the caller reports it then
			return
		}
	})
}
