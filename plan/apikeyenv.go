package plan

import (
	"regexp"
	"strings"
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// keyPrefixes start API keys of well-known providers and proxies; no variable name starts so.
var keyPrefixes = []string{"sk-", "sk_", "hf_", "gsk_", "xai-", "pk-", "rk-", "nvapi-", "ghp_", "glpat-", "key-", "bearer "}

// apiKeyEnvProblem says why name cannot be the name of an environment variable holding the API
// key, or "" when it can. It never repeats name: a key pasted by mistake must not be printed.
func apiKeyEnvProblem(name string) string {
	if name == "" {
		return ""
	}
	low := strings.ToLower(name)
	for _, p := range keyPrefixes {
		if strings.HasPrefix(low, p) {
			return "target.api_key_env (--api-key-env) looks like an API key, not the name of an environment variable: put the key in a variable (export OPENAI_API_KEY=...) and pass its name, e.g. --api-key-env OPENAI_API_KEY"
		}
	}
	if !envName.MatchString(name) {
		return "target.api_key_env (--api-key-env) is not an environment variable name (letters, digits and '_', not starting with a digit): put the key in a variable and pass its name, e.g. --api-key-env OPENAI_API_KEY"
	}
	// a long mixed-case run of letters and digits without a word separator is a key, not a name
	var upper, lower, digit bool
	for _, r := range name {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= '0' && r <= '9':
			digit = true
		}
	}
	if len(name) >= 24 && upper && lower && digit {
		return "target.api_key_env (--api-key-env) looks like an API key, not the name of an environment variable: put the key in a variable (export OPENAI_API_KEY=...) and pass its name, e.g. --api-key-env OPENAI_API_KEY"
	}
	return ""
}
