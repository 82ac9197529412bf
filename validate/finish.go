package validate

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/refine-spec/refine/internal/markdown"
)

// reasonKey folds a finish reason for comparison: lower case, without the
// '_', '-' and spaces that providers spell differently ("max_tokens",
// "maxTokens", "MAX_TOKENS").
func reasonKey(reason string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(reason) {
		switch r {
		case '_', '-', ' ':
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// CutByTokenLimit reports whether a backend's finish reason says the token
// limit cut the answer: OpenAI and Ollama "length", Anthropic "max_tokens"
// (and Gemini's "MAX_TOKENS"), MCP sampling "maxTokens"; letter case, '_'
// and '-' aside. A larger limit can fix such an answer; a context window
// that is full (ContextExceeded) cannot, and is not reported here.
func CutByTokenLimit(reason string) bool {
	switch reasonKey(reason) {
	case "length", "maxtokens", "maxoutputtokens", "tokenlimit":
		return true
	}
	return false
}

// ProviderRefusal reports whether a backend's finish reason says the
// provider refused the answer or filtered it: Anthropic "refusal", OpenAI
// "content_filter", and their relatives (Gemini "SAFETY", Bedrock
// "guardrail_intervened"); letter case, '_' and '-' aside.
func ProviderRefusal(reason string) bool {
	switch reasonKey(reason) {
	case "refusal", "contentfilter", "contentfiltered", "safety", "prohibitedcontent", "blocklist", "guardrailintervened":
		return true
	}
	return false
}

// ContextExceeded reports whether a backend's finish reason says the
// prompt and answer did not fit the model's context window (Anthropic
// "model_context_window_exceeded", "context_length_exceeded" and the
// like). A larger token limit does not help: the prompt must shrink.
func ContextExceeded(reason string) bool {
	switch reasonKey(reason) {
	case "modelcontextwindowexceeded", "contextwindowexceeded", "contextlengthexceeded", "contextexceeded":
		return true
	}
	return false
}

// finishCheck fails an answer whose finish reason says it was cut by the
// token limit or refused by the provider; ok is true otherwise.
func finishCheck(reason string) (Result, bool) {
	switch {
	case CutByTokenLimit(reason):
		return Fail(Truncated, "the answer was cut by the token limit (finish reason "+quote(reason)+"): it is incomplete, so it was not read"), false
	case ProviderRefusal(reason):
		return Fail(Refusal, "the provider refused the answer (finish reason "+quote(reason)+")"), false
	}
	return Result{}, true
}

// NoText is the FILE_MISSING result for a backend response that carries no
// text at all: no text block, only a tool call, a zero-length answer.
// cause says which ("only a tool_use block"); the message never names a
// file the user did not write. An answer of whitespace only is not this
// but EMPTY_OUTPUT, as the validators report it.
func NoText(cause string) Result {
	msg := "the backend returned no text"
	if c := strings.TrimSpace(cause); c != "" {
		msg += ": " + c
	}
	return Fail(MissingFile, msg)
}

// maxHeaderlessChars bounds the answers read as a refusal or a question
// back: a long answer without the required header is a misformatted
// answer, whatever its last sentence asks.
const maxHeaderlessChars = 3000

// refusalPhrases decline the task wherever they stand in a short answer;
// refusalOpeners do when the answer starts with them and asks nothing.
// Both are matched in lower case with straight apostrophes.
var (
	refusalPhrases = [...]string{
		"i can't help", "i cannot help", "i can't assist", "i cannot assist", "i can't comply", "i cannot comply",
		"i can't provide", "i cannot provide", "i can't fulfill", "i cannot fulfill", "i can't do that", "i cannot do that",
		"i won't help", "i will not help", "i won't be able to help", "i'm not able to help", "i am not able to help",
		"i'm unable to help", "i am unable to help", "i'm unable to assist", "i am unable to assist", "i must decline",
		"i have to decline", "i'm not comfortable", "i am not comfortable", "i won't", "i will not",
	}
	refusalOpeners = [...]string{
		"i'm sorry", "i am sorry", "sorry,", "sorry but", "i apologize", "unfortunately, i", "unfortunately i",
		"i can't", "i cannot", "i can not", "i'm unable", "i am unable", "i'm not able", "i am not able", "as an ai",
	}
	// questionStarts open a sentence that asks the user something.
	questionStarts = [...]string{
		"could you", "can you", "would you", "will you", "do you", "did you", "are you", "should i", "shall i",
		"may i", "could i", "can i", "which", "what", "how", "when", "where", "who", "is it", "is there", "are there",
		"is this", "does", "do", "please clarify", "please confirm", "please let me know",
	}
	// askPhrases ask the user for something without a question mark.
	askPhrases = [...]string{"please clarify", "could you clarify", "please confirm", "let me know which", "let me know whether", "let me know if you"}
)

// headerless classifies an answer that has no required header: REFUSAL
// when it declines the task, CLARIFICATION when it asks the user a question
// instead, "" otherwise (a WRONG_FORMAT). Conservative on purpose: only a
// short answer without any heading is judged (one with headings is a
// misformatted answer), and a refusal that asks for what it needs to
// proceed is a question back.
func headerless(d *markdown.Doc) (FailureType, string) {
	prose := strings.TrimSpace(d.Prose)
	if prose == "" || len(d.Headings) > 0 || utf8.RuneCountInString(prose) > maxHeaderlessChars {
		return "", ""
	}
	low := strings.ToLower(strings.NewReplacer("\u2019", "'", "\u2018", "'", "*", "", "_", " ").Replace(prose))
	low = strings.Join(strings.Fields(low), " ")
	for _, p := range refusalPhrases {
		if strings.Contains(low, p) && !strings.Contains(low, p+" proceed") && !strings.Contains(low, p+" continue") {
			return Refusal, "the answer declines the task (" + quote(sentenceAround(low, p)) + ") instead of resolving it"
		}
	}
	if q := question(low); q != "" {
		return Clarification, "the answer asks a question back (" + quote(q) + ") instead of resolving the gaps"
	}
	for _, p := range refusalOpeners {
		if strings.HasPrefix(low, p) {
			return Refusal, "the answer declines the task (" + quote(sentenceAround(low, p)) + ") instead of resolving it"
		}
	}
	return "", ""
}

// question returns the first sentence of low that asks the user something:
// one ending in '?' that opens with a question word or addresses "you",
// or a request such as "please clarify".
func question(low string) string {
	start := 0
	for i := 0; i < len(low); i++ {
		c := low[i]
		if c != '?' && c != '.' && c != '!' && c != '\n' {
			continue
		}
		s := strings.TrimLeft(low[start:i+1], " -*>#0123456789.)")
		start = i + 1
		if c != '?' {
			continue
		}
		for _, w := range questionStarts {
			if strings.HasPrefix(s, w) && (len(s) == len(w) || !isLetter(s[len(w)])) {
				return s
			}
		}
		if strings.Contains(s, " you ") || strings.Contains(s, " you?") || strings.Contains(s, " your ") {
			return s
		}
	}
	for _, p := range askPhrases {
		if strings.Contains(low, p) {
			return sentenceAround(low, p)
		}
	}
	return ""
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// sentenceAround returns the sentence of low that holds phrase.
func sentenceAround(low, phrase string) string {
	i := strings.Index(low, phrase)
	if i < 0 {
		return phrase
	}
	start := strings.LastIndexAny(low[:i], ".!?\n") + 1
	end := strings.IndexAny(low[i:], ".!?\n")
	if end < 0 {
		end = len(low) - i
	} else {
		end++
	}
	return strings.TrimSpace(low[start : i+end])
}
