package suggest

import (
	"regexp"
	"slices"
	"strings"
)

// What a column's name means, beyond the shape of its values: a fee paid per team is no price, a
// flag or a code is no player count, a code beside its name (BK_COS beside BK_COS_NM) is not
// what the page shows. Names are compared by their words (nameWords: BK_COS_NM is bk, cos, nm;
// courseName is course, name), so that cost is not cos; Korean names by what they contain.

// perTeamWords and perTeamKorean name a fee paid per team (a cart, a caddie), never the price of
// a tee time a golfer pays.
var (
	perTeamWords  = []string{"cart", "caddie", "caddy", "buggy", "team"}
	perTeamKorean = regexp.MustCompile(`카트|캐디|팀당`)
)

// perTeamFee reports whether a column's name says a fee per team; the word it says it by.
func perTeamFee(name string) (string, bool) {
	if w := perTeamKorean.FindString(name); w != "" {
		return w, true
	}
	for _, w := range nameWords(name) {
		if slices.Contains(perTeamWords, w) {
			return w, true
		}
	}
	return "", false
}

// idWords are the words of an id's name (ezlinksID, sponsorID, rsv_seq): a number that names
// something is never a price or a player count.
var idWords = []string{"id", "seq", "idx", "uuid"}

// idName reports whether a column's name says an id; the word it says it by.
func idName(name string) (string, bool) {
	for _, w := range nameWords(name) {
		if slices.Contains(idWords, w) {
			return w, true
		}
	}
	return "", false
}

// flagWords are the words of a flag's or a code's name (BK_ROUNDF, GOLF_YN, CO_DIV, COS_CD,
// PART_GU, isFlag): such a column is never the players, whatever its values look like.
var flagWords = []string{"yn", "div", "cd", "gu", "flag", "flg"}

// flagName reports whether a column's name says a flag or a code; the word it says it by.
func flagName(name string) (string, bool) {
	if strings.Contains(strings.ToLower(name), "roundf") {
		return "roundf", true
	}
	for _, w := range nameWords(name) {
		if slices.Contains(flagWords, w) {
			return w, true
		}
	}
	return "", false
}

// siblingSuffixes are what a column's name sibling adds to its name: the name of what the column
// codes (BK_COS → BK_COS_NM, course → courseName, 코스 → 코스명).
var siblingSuffixes = []string{"_nm", "_name", "nm", "name", "명", " 명", "_명", "kor", "_kor", "kr", "_kr"}

// codedBy is the column whose name sibling c is (BK_COS for BK_COS_NM), -1 for none.
func codedBy(cols []column, c column) int {
	for j, o := range cols {
		if o.where != c.where && nameSibling(cols, o) >= 0 && cols[nameSibling(cols, o)].where == c.where {
			return j
		}
	}
	return -1
}

// nameSibling is the index of the column whose name is c's with a siblingSuffixes suffix (the
// name beside c's code), -1 for none.
func nameSibling(cols []column, c column) int {
	bases := []string{strings.ToLower(c.name)}
	for _, suffix := range codeSuffixes { // courseCd beside courseNm, COS_CD beside COS_NM
		if b, ok := strings.CutSuffix(bases[0], suffix); ok && b != "" {
			bases = append(bases, b)
		}
	}
	for _, base := range bases {
		for j, o := range cols {
			n := strings.ToLower(o.name)
			if o.where == c.where || !strings.HasPrefix(n, base) {
				continue
			}
			if slices.Contains(siblingSuffixes, n[len(base):]) {
				return j
			}
		}
	}
	return -1
}

// codeSuffixes are what a code's name ends with when its name sibling replaces it (courseCd /
// courseNm).
var codeSuffixes = []string{"_cd", "cd", "_code", "code"}

// partWords name a course part by a whole word of a column's name (BK_COS, courseNm, CourseName,
// part_nm); partKorean by what a Korean name contains.
var (
	partWords  = []string{"part", "cos", "course", "cours", "crs"}
	partKorean = regexp.MustCompile(`코스`)
)

// partName reports whether a column's name names a course part, by a whole word (cost is not
// cos); the word it names it by.
func partName(name string) (string, bool) {
	if w := partKorean.FindString(name); w != "" {
		return w, true
	}
	for _, w := range nameWords(name) {
		if slices.Contains(partWords, w) {
			return w, true
		}
	}
	return "", false
}

// rePartValue is a value that names a course part: ending in 코스 or course, or a compass or
// in/out half (동, 서, OUT, IN, East).
var rePartValue = regexp.MustCompile(`(?i)^(.{1,12}\s*(코스|course|cos)|out|in|east|west|south|north|동|서|남|북|[a-z]?\s*코스)$`)

// partValues reports whether most of a column's non-empty values name a course part (at least
// 80 %), with one of them.
func partValues(values []string) (string, bool) {
	n, named, one := 0, 0, ""
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		n++
		if rePartValue.MatchString(v) {
			named++
			one = v
		}
	}
	return one, n > 0 && named*5 >= n*4
}

// distinct is how many distinct non-empty values a column takes.
func distinct(values []string) int {
	seen := map[string]bool{}
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			seen[v] = true
		}
	}
	return len(seen)
}
