# The reference curves for the cumulative incidence goldens (compose/dev/incidence-goldens):
# survival's survfit with a multi-state status (censored first: "open"; then the two events), the
# Aalen-Johansen estimate, which handles tied times without jitter. Reads the lifetimes CSV that
# generate.py wrote; prints one CSV row per group and distinct time.
suppressPackageStartupMessages(library(survival))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE, encoding = "UTF-8")
d$state <- factor(d$status, levels = c("open", "booked", "expired"))

fit1 <- function(kind, course, weekday, lead, g) {
  f <- survfit(Surv(time, state) ~ 1, data = g)
  s <- f$states  # "booked", "expired", "(s0)"
  data.frame(kind = kind, course = course, weekday = weekday, lead = lead,
             time = sprintf("%.17g", f$time),
             n_risk = f$n.risk[, which(s == "(s0)")],
             n_booked = f$n.event[, which(s == "booked")],
             n_expired = f$n.event[, which(s == "expired")],
             n_censor = f$n.censor,
             booked = sprintf("%.17g", f$pstate[, which(s == "booked")]),
             expired = sprintf("%.17g", f$pstate[, which(s == "expired")]),
             r_std_err = sprintf("%.17g", f$std.err[, which(s == "booked")]))
}

out <- list(fit1("overall", "", -1, "", d))
for (c in sort(unique(d$course))) {
  out[[length(out) + 1]] <- fit1("course", c, -1, "", d[d$course == c, ])
  for (w in sort(unique(d$weekday[d$course == c]))) {
    out[[length(out) + 1]] <- fit1("course_weekday", c, w, "", d[d$course == c & d$weekday == w, ])
  }
}
for (l in sort(unique(d$lead))) out[[length(out) + 1]] <- fit1("lead", "", -1, l, d[d$lead == l, ])
write.csv(do.call(rbind, out), stdout(), row.names = FALSE)
