package notify

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestChannelURLsThatCanNeverWorkFailParse: a channel URL is checked after url_env is read (the
// scheme http or https, a host), at the line of url or url_env, without printing the URL (it may
// hold a secret).
func TestChannelURLsThatCanNeverWorkFailParse(t *testing.T) {
	cases := []struct {
		name, file string
		env        map[string]string
		want       string
	}{
		{"ftp webhook", "channels:\n  hook:\n    type: webhook\n    url: \"ftp://user:FILEPW77@127.0.0.1:46310/hook\"\nwatches:\n  - name: a\n    channels: [hook]\n",
			nil, `line 4: channel "hook": the URL's scheme is "ftp" (want http or https)`},
		{"ftp from the environment", "channels:\n  hook:\n    type: webhook\n    url_env: HOOK_URL\nwatches:\n  - name: a\n    channels: [hook]\n",
			map[string]string{"HOOK_URL": "ftp://127.0.0.1/hook?api_key=HOOKSECRET1"}, `line 4: channel "hook": the URL's scheme is "ftp"`},
		{"no host", "channels:\n  s:\n    type: slack\n    url_env: SLACK_URL\nwatches:\n  - name: a\n    channels: [s]\n",
			map[string]string{"SLACK_URL": "https:///services/T0/B0/SLACKSECRET2"}, `line 4: channel "s": the URL has no host`},
		{"no scheme", "channels:\n  d:\n    type: discord\n    url_env: DISCORD_URL\nwatches:\n  - name: a\n    channels: [d]\n",
			map[string]string{"DISCORD_URL": "discord.com/api/webhooks/1/DISCORDSECRET3"}, `line 4: channel "d": the URL's scheme is ""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file), env(tc.env))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			for _, secret := range []string{"FILEPW77", "HOOKSECRET1", "SLACKSECRET2", "DISCORDSECRET3"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q names the URL's secret", err)
				}
			}
		})
	}
}

// TestUnsupportedSchemeIsPermanent: a URL Go's client cannot speak never becomes sendable by
// retrying.
func TestUnsupportedSchemeIsPermanent(t *testing.T) {
	ch := &Channel{Name: "hook", Type: Webhook, URL: "ftp://127.0.0.1:1/hook?api_key=HOOKSECRET1", Timeout: time.Second}
	err := ch.Send(t.Context(), http.DefaultClient, Message{Key: uuid.New(), Watch: "w"})
	var se *sendError
	if !errors.As(err, &se) || se.Transient || se.Unknown || strings.Contains(err.Error(), "HOOKSECRET1") {
		t.Errorf("ftp URL: %+v, want a permanent error without the URL", se)
	}
}
