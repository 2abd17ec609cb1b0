package site

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Values of the golfer's own that a site's requests send (a member number the list answers only
// for): Env maps each NAME, read by the requests' templates as {{.Env.NAME}}, to the environment
// variable holding its value, as a login's credentials do. The sites file names the variable,
// never the value; the value is a secret of the crawl like a captured one: a request's key shows
// it as *** and its listings' URL drops the parameter, and it never reaches a log line, an error,
// a metric, an event or crawler try's output.

// compileEnv checks the env block: names a template can read, variables the environment can
// hold, and requests to send them.
func (s *Site) compileEnv() error {
	if len(s.Env) == 0 {
		return nil
	}
	if len(s.Requests) == 0 {
		return errors.New("env is read by requests ({{.Env.NAME}}): declare the pages as requests")
	}
	for _, name := range sortedKeys(s.Env) {
		at := "env." + name
		switch env := s.Env[name]; {
		case !reCaptureName.MatchString(name):
			return &keyError{key: at, err: fmt.Errorf("%s: a name is letters, digits and _ ({{.Env.%s}} must parse)", at, name)}
		case !reEnvName.MatchString(env):
			return &keyError{key: at, err: fmt.Errorf("%s must name an environment variable (letters, digits, _), not hold a value", at)}
		}
	}
	return nil
}

// HiddenEnv is the env block's names, each as *** (how a request, a page report and try show them).
func (s *Site) HiddenEnv() map[string]string {
	if len(s.Env) == 0 {
		return nil
	}
	out := make(map[string]string, len(s.Env))
	for name := range s.Env {
		out[name] = capturedShown
	}
	return out
}

// EnvValues reads the env block's values with getenv, for the requests' variables
// (RequestVars.Env); an unset variable is an error naming it, never a value.
func (s *Site) EnvValues(getenv func(string) string) (map[string]string, error) {
	if len(s.Env) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(s.Env))
	for _, name := range slices.Sorted(maps.Keys(s.Env)) {
		v := getenv(s.Env[name])
		if v == "" {
			return nil, fmt.Errorf("env %s: environment variable %s is not set", name, s.Env[name])
		}
		out[name] = v
	}
	return out, nil
}
