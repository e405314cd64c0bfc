/*
 * expr_eval.c -- a recursive-descent evaluator for a tiny expression
 * language, built with -O2 -fomit-frame-pointer (tools/make-crashes).
 *
 * Every grammar level is its own non-inlined function, so evaluating a
 * formula with a few nested parentheses puts a deep chain of distinct frames
 * on the stack: assignment -> conditional -> logical_or -> logical_and ->
 * equality -> relational -> additive -> multiplicative -> unary -> postfix ->
 * primary -> (parenthesis) -> assignment -> ...  No function keeps a frame
 * pointer (rbp is an ordinary callee-saved register here), and the levels have
 * different frame sizes, so only STACK CFI can recover the callers.
 *
 * The crash: the formula names a variable that was never defined;
 * lookup_variable() returns NULL and parse_primary() reads its value through
 * that NULL pointer.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define LEVEL __attribute__((noinline, noclone))

struct variable {
    const char *name;
    long value;
};

struct parser {
    const char *text;
    size_t pos;
    int depth;
    struct variable *vars;
    size_t nvars;
};

static long parse_assignment(struct parser *p);

LEVEL static struct variable *lookup_variable(struct parser *p, const char *name)
{
    for (size_t i = 0; i < p->nvars; i++)
        if (strcmp(p->vars[i].name, name) == 0)
            return &p->vars[i];
    return NULL; /* undefined: the caller forgets to check */
}

static void skip_blanks(struct parser *p)
{
    while (p->text[p->pos] == ' ')
        p->pos++;
}

static int accept(struct parser *p, const char *op)
{
    size_t n = strlen(op);
    skip_blanks(p);
    if (strncmp(p->text + p->pos, op, n) == 0) {
        p->pos += n;
        return 1;
    }
    return 0;
}

LEVEL static long parse_primary(struct parser *p)
{
    char name[48];
    size_t n = 0;

    skip_blanks(p);
    if (accept(p, "(")) {
        p->depth++;
        long inner = parse_assignment(p);
        accept(p, ")");
        p->depth--;
        return inner;
    }
    if (isdigit((unsigned char)p->text[p->pos])) {
        long value = 0;
        while (isdigit((unsigned char)p->text[p->pos]))
            value = value * 10 + (p->text[p->pos++] - '0');
        return value;
    }
    while (isalnum((unsigned char)p->text[p->pos]) || p->text[p->pos] == '_') {
        if (n + 1 < sizeof name)
            name[n++] = p->text[p->pos];
        p->pos++;
    }
    name[n] = '\0';
    struct variable *v = lookup_variable(p, name);
    return v->value; /* the crash: v is NULL for an undefined name */
}

LEVEL static long parse_postfix(struct parser *p)
{
    long value = parse_primary(p);
    while (accept(p, "%"))
        value = value / 100;
    return value;
}

LEVEL static long parse_unary(struct parser *p)
{
    int negate = 0;
    while (accept(p, "-"))
        negate = !negate;
    long value = parse_postfix(p);
    return negate ? -value : value;
}

LEVEL static long parse_multiplicative(struct parser *p)
{
    long value = parse_unary(p);
    for (;;) {
        if (accept(p, "*"))
            value *= parse_unary(p);
        else if (accept(p, "/")) {
            long divisor = parse_unary(p);
            value = divisor ? value / divisor : 0;
        } else
            return value;
    }
}

LEVEL static long parse_additive(struct parser *p)
{
    long value = parse_multiplicative(p);
    for (;;) {
        if (accept(p, "+"))
            value += parse_multiplicative(p);
        else if (accept(p, "-"))
            value -= parse_multiplicative(p);
        else
            return value;
    }
}

LEVEL static long parse_relational(struct parser *p)
{
    long value = parse_additive(p);
    for (;;) {
        if (accept(p, "<="))
            value = value <= parse_additive(p);
        else if (accept(p, ">="))
            value = value >= parse_additive(p);
        else if (accept(p, "<"))
            value = value < parse_additive(p);
        else if (accept(p, ">"))
            value = value > parse_additive(p);
        else
            return value;
    }
}

LEVEL static long parse_equality(struct parser *p)
{
    long value = parse_relational(p);
    for (;;) {
        if (accept(p, "=="))
            value = value == parse_relational(p);
        else if (accept(p, "!="))
            value = value != parse_relational(p);
        else
            return value;
    }
}

LEVEL static long parse_logical_and(struct parser *p)
{
    long value = parse_equality(p);
    while (accept(p, "&&")) {
        long rhs = parse_equality(p);
        value = value && rhs;
    }
    return value;
}

LEVEL static long parse_logical_or(struct parser *p)
{
    long value = parse_logical_and(p);
    while (accept(p, "||")) {
        long rhs = parse_logical_and(p);
        value = value || rhs;
    }
    return value;
}

LEVEL static long parse_conditional(struct parser *p)
{
    long condition = parse_logical_or(p);
    if (!accept(p, "?"))
        return condition;
    long when_true = parse_assignment(p);
    accept(p, ":");
    long when_false = parse_conditional(p);
    return condition ? when_true : when_false;
}

LEVEL static long parse_assignment(struct parser *p)
{
    long value = parse_conditional(p);
    if (accept(p, "=")) {
        long rhs = parse_assignment(p);
        value = rhs;
    }
    return value;
}

LEVEL static long evaluate_formula(const char *text, struct variable *vars, size_t nvars)
{
    struct parser p = {text, 0, 0, vars, nvars};
    long value = parse_assignment(&p);
    printf("%s => %ld\n", text, value);
    return value;
}

int main(void)
{
    struct variable vars[] = {
        {"price", 12000}, {"tax", 19}, {"discount", 500}, {"quantity", 3},
    };
    const size_t nvars = sizeof vars / sizeof vars[0];

    setvbuf(stdout, NULL, _IONBF, 0);
    evaluate_formula("quantity * price - discount", vars, nvars);
    evaluate_formula("((price * (100 + tax)) / 100) * quantity", vars, nvars);
    /* "shipping" is not defined */
    long total = evaluate_formula("quantity * (price + ((tax * (price / 100)) + (discount > 0 ? -discount : shipping)))",
                                  vars, nvars);
    return total > 0 ? 0 : 1;
}
