//! The rule-matching table, and focused tests of parsing and globs.

use std::path::{Path, PathBuf};

use super::{CallFacts, Effect, Rule, RuleOrigin, RuleSet, Subject};
use Effect::{Allow, Ask, Deny};
use kaizen_protocol::Danger;

/// Rules come from the project `/proj`; the home directory is `/home/u`.
const BASE: &str = "/proj";
const HOME: &str = "/home/u";

/// A call's subject, written compactly for the table.
#[derive(Clone, Copy, Debug)]
enum S {
    Cmd(&'static str),
    Read(&'static str),
    Edit(&'static str),
    Url(&'static str),
    Name(&'static str),
    Nothing,
}

impl S {
    fn subject(self) -> Subject {
        match self {
            S::Cmd(c) => Subject::Command(c.into()),
            S::Read(p) => Subject::ReadPath(p.into()),
            S::Edit(p) => Subject::EditPath(p.into()),
            S::Url(u) => Subject::Url(u.into()),
            S::Name(n) => Subject::Name(n.into()),
            S::Nothing => Subject::None,
        }
    }
}

fn origin(label: &str) -> RuleOrigin {
    RuleOrigin {
        label: label.into(),
        base: PathBuf::from(BASE),
    }
}

/// `"allow:Bash(ls)"` → an allow rule for `Bash(ls)`.
fn rule(spec: &str) -> Rule {
    let (effect, text) = spec.split_once(':').expect("effect:rule");
    let effect = match effect {
        "allow" => Allow,
        "ask" => Ask,
        "deny" => Deny,
        other => panic!("unknown effect {other}"),
    };
    Rule::parse(effect, text, origin("test"), Path::new(HOME)).unwrap_or_else(|e| panic!("{e}"))
}

fn set(specs: &[&str]) -> RuleSet {
    let mut set = RuleSet::new();
    specs.iter().for_each(|s| set.push(rule(s)));
    set
}

fn decide(set: &RuleSet, tool: &str, subject: S, cwd: &str) -> Option<Effect> {
    let call = CallFacts {
        tool,
        danger: Danger::High,
        subject: subject.subject(),
        cwd: Path::new(cwd),
    };
    set.decide(&call).map(|d| d.effect)
}

type Row = (
    &'static [&'static str],
    &'static str,
    S,
    &'static str,
    Option<Effect>,
);

#[rustfmt::skip]
const TABLE: &[Row] = &[
    // Exact, legacy prefix with its word boundary, wildcards, optional ` *`.
    (&["allow:Bash(npm run build)"], "Bash", S::Cmd("npm run build"), BASE, Some(Allow)),
    (&["allow:Bash(npm run build)"], "Bash", S::Cmd("npm run build --watch"), BASE, None),
    (&["allow:Bash(npm run test:*)"], "Bash", S::Cmd("npm run test"), BASE, Some(Allow)),
    (&["allow:Bash(npm run test:*)"], "Bash", S::Cmd("npm run test unit"), BASE, Some(Allow)),
    (&["allow:Bash(npm run test:*)"], "Bash", S::Cmd("npm run testx"), BASE, None),
    (&["allow:Bash(git * main)"], "Bash", S::Cmd("git push origin main"), BASE, Some(Allow)),
    (&["allow:Bash(git * main)"], "Bash", S::Cmd("git push origin dev"), BASE, None),
    (&["allow:Bash(npm run test*)"], "Bash", S::Cmd("npm run testx"), BASE, Some(Allow)),
    (&["allow:Bash(ls *)"], "Bash", S::Cmd("ls"), BASE, Some(Allow)),
    (&["allow:Bash(ls *)"], "Bash", S::Cmd("ls -la"), BASE, Some(Allow)),
    (&["allow:Bash(ls *)"], "Bash", S::Cmd("lsof"), BASE, None),
    (&["allow:Bash(* --version)"], "Bash", S::Cmd("cargo --version"), BASE, Some(Allow)),
    (&["allow:Bash(git commit -m *)"], "Bash", S::Cmd("git commit -m \"fix bug\""), BASE, Some(Allow)),
    (&["allow:Bash(echo \\(hi\\))"], "Bash", S::Cmd("echo '(hi)'"), BASE, Some(Allow)),
    (&["allow:Bash"], "Bash", S::Cmd("anything; rm -rf /"), BASE, Some(Allow)),
    (&["allow:Bash(*)"], "Bash", S::Cmd("rm -rf / &&& unparseable"), BASE, Some(Allow)),
    (&["allow:Bash(ls)"], "bash", S::Cmd("ls"), BASE, None),
    // A file written is a part an allow must cover; /dev/null and
    // descriptors are not; redirection targets still run code.
    (&["allow:Bash(echo hello)"], "Bash", S::Cmd("echo hello > out.txt"), BASE, None),
    (&["allow:Bash(echo hello)", "allow:Bash(> out.txt)"], "Bash", S::Cmd("echo hello > out.txt"), BASE, Some(Allow)),
    (&["allow:Bash(echo:*)", "allow:Bash(git status:*)"], "Bash", S::Cmd("echo '[core] fsmonitor = x' >> .git/config"), BASE, None),
    (&["allow:Bash(make:*)"], "Bash", S::Cmd("make > /dev/null 2>&1"), BASE, Some(Allow)),
    (&["allow:Bash(make:*)"], "Bash", S::Cmd("make 2>&1"), BASE, Some(Allow)),
    (&["allow:Bash(echo:*)"], "Bash", S::Cmd("echo x > $(rm -rf ~)"), BASE, None),
    // Spellings that run a denied program: by path, glob, brace list,
    // expansion, alias, function, wrapper, trap, a script on stdin, find.
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("/bin/rm -rf x"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("./node_modules/.bin/../../../usr/bin/rm x"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("/usr/bin/r? -rf x"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("/usr/bin/[r]m -rf x"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("{rm,-rf,x}"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("alias x=rm; x -rf y"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("g() { \"$@\"; }; g r''m x"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("c=rm; $c -rf y"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("IFS=,; c=rm,-rf,y; $c"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("${RM:-rm} -rf y"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("$(echo rm) -rf y"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("\\rm -rf y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("r\\m -rf y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("\"r\"'m' -rf y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("eval \"r\"\"m -rf y\""), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("env --chdir /tmp rm -rf y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("env --chdir=/tmp rm -rf y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("env -S 'rm -rf y'"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("nice --adjustment 5 rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("nice -n5 rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("echo y | xargs --max-args 1 rm"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("echo y | xargs -I{} rm {}"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("stdbuf --output L rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("setsid -f rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("flock /tmp/lock rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("flock /tmp/lock -c 'rm y'"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("ionice -c3 rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("taskset -c 0 rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("chrt -b 0 rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("unbuffer rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("timeout --signal KILL 5 rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("sudo --user root rm y"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("frobnicate-wrapper --weird rm y"), BASE, None),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("trap 'rm -rf y' EXIT"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("trap -- 'rm -rf y' EXIT; true"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("echo 'rm -rf y' | bash"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("bash -s <<< 'rm -rf y'"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("sh <<EOF\nrm -rf y\nEOF"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("bash build.sh"), BASE, None),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("find . -name '*.o' -exec rm {} \\;"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("find . -execdir /bin/rm {} +"), BASE, Some(Deny)),
    (&["deny:Bash(git push:*)"], "Bash", S::Cmd("git -C . push --force"), BASE, Some(Deny)),
    (&["deny:Bash(git push:*)"], "Bash", S::Cmd("git --no-pager push"), BASE, Some(Deny)),
    (&["deny:Bash(git push:*)"], "Bash", S::Cmd("git -c core.pager=cat --git-dir=.git push"), BASE, Some(Deny)),
    (&["deny:Bash(git push:*)"], "Bash", S::Cmd("/usr/bin/git -C. push"), BASE, Some(Deny)),
    (&["deny:Bash(git push:*)"], "Bash", S::Cmd("git --unknown-option push"), BASE, Some(Ask)),
    (&["deny:Bash(git push:*)"], "Bash", S::Cmd("git $SUB origin"), BASE, Some(Ask)),
    (&["deny:Bash(git push:*)"], "Bash", S::Cmd("git p?sh origin"), BASE, Some(Ask)),
    (&["deny:Bash(git push:*)"], "Bash", S::Cmd("git status $X"), BASE, None),
    (&["deny:Bash(git push:*)"], "Bash", S::Cmd("echo $HOME && ls *.rs"), BASE, None),
    (&["deny:Bash(curl:*)"], "Bash", S::Cmd("c\\url https://x.test"), BASE, Some(Deny)),
    (&["ask:Bash(curl:*)"], "Bash", S::Cmd("$(which curl) https://x.test"), BASE, Some(Ask)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("rm &&& unparseable"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("echo ${x:-$(r''m y)}"), BASE, Some(Ask)),
    // What is not resolved is never allowed beyond the words that are.
    (&["allow:Bash(git status:*)"], "Bash", S::Cmd("git status $X"), BASE, Some(Allow)),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("ls *.rs"), BASE, Some(Allow)),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("$CMD"), BASE, None),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("l? -la"), BASE, None),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("alias ls='rm -rf'; ls"), BASE, None),
    (&["allow:Bash(echo:*)"], "Bash", S::Cmd("echo x | bash"), BASE, None),
    (&["allow:Bash(git status:*)"], "Bash", S::Cmd("git -c core.fsmonitor=x status"), BASE, None),
    // Compound commands, part by part.
    (&["allow:Bash(git status:*)"], "Bash", S::Cmd("git status; rm -rf ~"), BASE, None),
    (&["allow:Bash(git status:*)"], "Bash", S::Cmd("git status $(rm -rf ~)"), BASE, None),
    (&["allow:Bash(git status:*)", "allow:Bash(ls:*)"], "Bash", S::Cmd("git status && ls"), BASE, Some(Allow)),
    (&["allow:Bash(git status:*)", "allow:Bash(ls:*)"], "Bash", S::Cmd("git status || ls -la"), BASE, Some(Allow)),
    (&["allow:Bash(git status:*)", "allow:Bash(ls:*)"], "Bash", S::Cmd("git status | grep x"), BASE, None),
    (&["allow:Bash(git log:*)", "allow:Bash(grep:*)"], "Bash", S::Cmd("git log | grep fix"), BASE, Some(Allow)),
    (&["allow:Bash(cargo test:*)", "allow:Bash(tail:*)"], "Bash", S::Cmd("cargo test -p x 2>&1 | tail -n 20"), BASE, Some(Allow)),
    (&["allow:Bash(echo:*)"], "Bash", S::Cmd("echo `rm -rf ~`"), BASE, None),
    (&["allow:Bash(echo:*)", "allow:Bash(date)"], "Bash", S::Cmd("echo \"today: $(date)\""), BASE, Some(Allow)),
    (&["allow:Bash(echo:*)"], "Bash", S::Cmd("echo \"today: $(date)\""), BASE, None),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("(ls; rm -rf ~)"), BASE, None),
    (&["allow:Bash(ls:*)", "allow:Bash(pwd)"], "Bash", S::Cmd("(ls; pwd)"), BASE, Some(Allow)),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("{ ls; rm x; }"), BASE, None),
    (&["allow:Bash(ls:*)", "allow:Bash(true)"], "Bash", S::Cmd("if true; then ls; fi"), BASE, Some(Allow)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("if true; then rm -rf x; fi"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("for f in a b; do rm $f; done"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("while true; do rm x; done"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("case x in x) rm y;; esac"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("f() { rm -rf /; }; f"), BASE, Some(Deny)),
    (&["allow:Bash(cat:*)"], "Bash", S::Cmd("cat <(rm -rf ~)"), BASE, None),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("diff <(ls) <(rm -rf x)"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("ls\nrm -rf x"), BASE, Some(Deny)),
    (&["allow:Bash(git status:*)"], "Bash", S::Cmd("git status\nrm -rf ~"), BASE, None),
    (&["allow:Bash(git status:*)"], "Bash", S::Cmd("git status # && rm -rf ~"), BASE, Some(Allow)),
    (&["allow:Bash(echo:*)"], "Bash", S::Cmd("echo 'a && b'"), BASE, Some(Allow)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("'rm' -rf /"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("cat <<EOF\n$(rm -rf x)\nEOF"), BASE, Some(Deny)),
    (&["allow:Bash(cat:*)"], "Bash", S::Cmd("cat <<'EOF'\n$(rm -rf x)\nEOF"), BASE, Some(Allow)),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("ls $((1+1))"), BASE, Some(Allow)),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("X=1"), BASE, None),
    // `bash -c`, `eval`, and wrappers.
    (&["allow:Bash(git status:*)"], "Bash", S::Cmd("bash -c 'git status'"), BASE, Some(Allow)),
    (&["allow:Bash(git status:*)"], "Bash", S::Cmd("bash -c 'git status; rm -rf ~'"), BASE, None),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("bash --rcfile /tmp/x -c ls"), BASE, None),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("sh -c \"rm -rf /\""), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("/bin/zsh -ec 'rm -rf /'"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("bash -c 'eval \"rm -rf /\"'"), BASE, Some(Deny)),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("eval ls -la"), BASE, Some(Allow)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("eval 'rm -rf /'"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("sudo rm -rf /"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("env FOO=1 rm -rf /"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("timeout 5 rm -rf /"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("nohup nice -n 5 rm x"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("find . | xargs -n 1 rm"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("command rm x"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("time rm x"), BASE, Some(Deny)),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("sudo -u root bash -c 'rm -rf /'"), BASE, Some(Deny)),
    (&["allow:Bash(rm:*)"], "Bash", S::Cmd("sudo rm x"), BASE, None),
    // Leading assignments: harmless ones are dropped, others kept.
    (&["allow:Bash(npm run test:*)"], "Bash", S::Cmd("NODE_ENV=test npm run test"), BASE, Some(Allow)),
    (&["allow:Bash(git status:*)"], "Bash", S::Cmd("LD_PRELOAD=/tmp/x.so git status"), BASE, None),
    (&["deny:Bash(git push:*)"], "Bash", S::Cmd("GIT_SSH_COMMAND=x git push"), BASE, Some(Deny)),
    // Unanalyzable lines: no allow, deny and ask on rough pieces.
    (&["allow:Bash(echo:*)"], "Bash", S::Cmd("echo ${x:-$(rm -rf ~)}"), BASE, None),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("echo ${x:-$(rm -rf ~)}"), BASE, Some(Deny)),
    (&["allow:Bash(ls:*)"], "Bash", S::Cmd("ls &&& rm"), BASE, None),
    (&["allow:Bash($'\\x6cs':*)"], "Bash", S::Cmd("$'\\x6cs' -la"), BASE, None),
    (&["deny:Bash(rm:*)"], "Bash", S::Cmd("ls &&& rm -rf /"), BASE, Some(Deny)),
    // Deny beats ask beats allow.
    (&["allow:Bash(git:*)", "ask:Bash(git push:*)"], "Bash", S::Cmd("git push"), BASE, Some(Ask)),
    (&["allow:Bash(git:*)", "ask:Bash(git push:*)", "deny:Bash(git push --force:*)"], "Bash", S::Cmd("git push --force"), BASE, Some(Deny)),
    (&["allow:Bash", "deny:Bash(curl:*)"], "Bash", S::Cmd("curl x"), BASE, Some(Deny)),
    (&["allow:Bash(ls:*)", "ask:Bash(rm:*)"], "Bash", S::Cmd("ls && rm x"), BASE, Some(Ask)),
    (&["allow:Bash(git:*)", "ask:Bash(git push:*)"], "Bash", S::Cmd("git pull"), BASE, Some(Allow)),
    // Paths: `//`, `~/`, `/` (origin base), `./`, bare, `**`, `*`, `..`.
    (&["deny:Read(//etc/passwd)"], "Read", S::Read("/etc/passwd"), BASE, Some(Deny)),
    (&["deny:Read(//etc/**)"], "Read", S::Read("/etc/ssh/sshd_config"), BASE, Some(Deny)),
    (&["deny:Read(~/.ssh/**)"], "Read", S::Read("/home/u/.ssh/id_rsa"), BASE, Some(Deny)),
    (&["deny:Read(~/.ssh/**)"], "Read", S::Read("/root/.ssh/id_rsa"), BASE, None),
    (&["deny:Read(/secrets/**)"], "Read", S::Read("/proj/secrets/a"), "/proj/sub", Some(Deny)),
    (&["deny:Read(/secrets/**)"], "Read", S::Read("secrets/a"), "/proj/sub", None),
    (&["deny:Read(./.env)"], "Read", S::Read(".env"), BASE, Some(Deny)),
    (&["deny:Read(./.env)"], "Read", S::Read("sub/.env"), BASE, None),
    (&["deny:Read(.env)"], "Read", S::Read("sub/deep/.env"), BASE, Some(Deny)),
    (&["deny:Read(.env)"], "Read", S::Read("/proj/.env"), "/proj/sub", None),
    (&["allow:Edit(src/**)"], "Edit", S::Edit("src/a/b.rs"), BASE, Some(Allow)),
    (&["allow:Edit(src/*.rs)"], "Edit", S::Edit("src/a/b.rs"), BASE, None),
    (&["allow:Edit(src/*.rs)"], "Edit", S::Edit("/proj/src/main.rs"), BASE, Some(Allow)),
    (&["deny:Read(./secrets/**)"], "Read", S::Read("secrets/../secrets/k.pem"), BASE, Some(Deny)),
    (&["deny:Read(./secrets/**)"], "Read", S::Read("public/../../proj/secrets/k"), BASE, Some(Deny)),
    (&["allow:Edit(./src/**)"], "Edit", S::Edit("src/../../etc/passwd"), BASE, None),
    (&["deny:Read(./secrets)"], "Read", S::Read("secrets/key.pem"), BASE, Some(Deny)),
    (&["deny:Read(*.pem)"], "Read", S::Read("certs/a/server.pem"), BASE, Some(Deny)),
    (&["deny:Read(~)"], "Read", S::Read("/home/u/.bashrc"), BASE, Some(Deny)),
    (&["allow:Read(../shared/**)"], "Read", S::Read("/proj/shared/x"), "/proj/sub", Some(Allow)),
    // Families: Read(…) covers every reading tool, Edit(…) every editing one.
    (&["deny:Read(./secrets/**)"], "Grep", S::Read("secrets/x"), BASE, Some(Deny)),
    (&["deny:Read(./secrets/**)"], "Edit", S::Edit("secrets/x"), BASE, None),
    (&["deny:Edit(./secrets/**)"], "Write", S::Edit("secrets/x"), BASE, Some(Deny)),
    (&["deny:Read"], "Glob", S::Read("/anything"), BASE, Some(Deny)),
    (&["allow:Write(src/**)"], "Write", S::Edit("src/a.rs"), BASE, Some(Allow)),
    (&["allow:Write(src/**)"], "Edit", S::Edit("src/a.rs"), BASE, None),
    // Domains.
    (&["allow:WebFetch(domain:example.com)"], "WebFetch", S::Url("https://example.com/page"), BASE, Some(Allow)),
    (&["allow:WebFetch(domain:example.com)"], "WebFetch", S::Url("https://api.example.com/"), BASE, None),
    (&["allow:WebFetch(domain:*.example.com)"], "WebFetch", S::Url("https://api.example.com/x"), BASE, Some(Allow)),
    (&["allow:WebFetch(domain:*.example.com)"], "WebFetch", S::Url("https://example.com/"), BASE, None),
    (&["allow:WebFetch(domain:example.com)"], "WebFetch", S::Url("https://example.com:8443/x"), BASE, Some(Allow)),
    (&["allow:WebFetch(domain:example.com)"], "WebFetch", S::Url("http://example.com@evil.test/"), BASE, None),
    (&["deny:WebFetch(domain:evil.test)"], "WebFetch", S::Url("http://example.com@evil.test/"), BASE, Some(Deny)),
    (&["allow:WebFetch(domain:example.com)"], "WebFetch", S::Url("https://example.com.evil.test/"), BASE, None),
    (&["allow:WebFetch(domain:example.com)"], "WebFetch", S::Url("https://EXAMPLE.com./"), BASE, Some(Allow)),
    (&["deny:WebFetch(domain:evil.test)"], "WebFetch", S::Url("http://evil.test\\@example.com/"), BASE, Some(Deny)),
    (&["allow:WebFetch(domain:*)"], "WebFetch", S::Url("https://x.y/"), BASE, Some(Allow)),
    (&["allow:WebFetch(domain:example.com)"], "WebSearch", S::Url("https://example.com/"), BASE, None),
    // Names.
    (&["allow:Task(Explore)"], "Task", S::Name("Explore"), BASE, Some(Allow)),
    (&["allow:Task(Explore)"], "Task", S::Name("explore"), BASE, None),
    (&["allow:Task(code-*)"], "Task", S::Name("code-reviewer"), BASE, Some(Allow)),
    (&["deny:Skill(plugin:*)"], "Skill", S::Name("plugin:deploy"), BASE, Some(Deny)),
    (&["deny:Skill(plugin:*)"], "Skill", S::Name("pluginx:deploy"), BASE, None),
    // MCP.
    (&["allow:mcp__github"], "mcp__github__create_issue", S::Nothing, BASE, Some(Allow)),
    (&["allow:mcp__github__*"], "mcp__github__list", S::Nothing, BASE, Some(Allow)),
    (&["allow:mcp__github__create_issue"], "mcp__github__delete_repo", S::Nothing, BASE, None),
    (&["allow:mcp__s"], "mcp__sx__t", S::Nothing, BASE, None),
    (&["deny:mcp__s__t"], "mcp__s__t", S::Nothing, BASE, Some(Deny)),
    // A specifier never matches a subject of another kind.
    (&["allow:Bash(ls)"], "Read", S::Read("ls"), BASE, None),
    (&["allow:Bash(ls)"], "Bash", S::Nothing, BASE, None),
    (&["allow:Bash"], "Bash", S::Nothing, BASE, Some(Allow)),
    (&["allow:WebFetch(domain:example.com)"], "WebFetch", S::Name("example.com"), BASE, None),
    (&["allow:Task(Explore)"], "Task", S::Url("Explore"), BASE, None),
];

#[test]
fn the_rule_table() {
    let mut failures = Vec::new();
    for (i, (rules, tool, subject, cwd, expected)) in TABLE.iter().enumerate() {
        let got = decide(&set(rules), tool, *subject, cwd);
        if got != *expected {
            failures.push(format!(
                "row {i}: {rules:?} {tool} {subject:?} in {cwd}: got {got:?}, want {expected:?}"
            ));
        }
    }
    assert!(TABLE.len() >= 60, "the table must keep at least 60 rows");
    assert!(
        failures.is_empty(),
        "{} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn decisions_do_not_depend_on_order_or_source() {
    let texts = [
        "allow:Bash(git:*)",
        "deny:Bash(git push --force:*)",
        "ask:Bash(git push:*)",
    ];
    let call = CallFacts {
        tool: "Bash",
        danger: Danger::High,
        subject: Subject::Command("git push --force".into()),
        cwd: Path::new(BASE),
    };
    for rotation in 0..texts.len() {
        let mut set = RuleSet::new();
        for (i, spec) in texts
            .iter()
            .cycle()
            .skip(rotation)
            .take(texts.len())
            .enumerate()
        {
            let mut rule = rule(spec);
            rule.origin = origin(["~/.claude/settings.json", "--allowedTools", "project"][i]);
            set.push(rule);
        }
        let decided = set.decide(&call).expect("a rule decides");
        assert_eq!(
            (decided.effect, decided.rule.text.as_str()),
            (Deny, "Bash(git push --force:*)")
        );
    }
}

#[test]
fn an_allow_rule_alone_must_cover_every_part() {
    let rule = rule("allow:Bash(git status:*)");
    let call = |c: &str| CallFacts {
        tool: "Bash",
        danger: Danger::High,
        subject: Subject::Command(c.into()),
        cwd: Path::new(BASE),
    };
    assert!(rule.matches(&call("git status --short")));
    assert!(!rule.matches(&call("git status && ls")));
    let set = set(&["allow:Bash(git status:*)", "allow:Bash(ls:*)"]);
    assert_eq!(
        set.decide(&call("git status && ls"))
            .map(|d| d.rule.text.as_str()),
        Some("Bash(git status:*)")
    );
}

#[test]
fn rule_accessors() {
    assert_eq!(rule("allow:mcp__github__*").tool(), "mcp__github");
    assert!(rule("allow:mcp__github").covers_whole_tool());
    assert!(rule("allow:Bash(*)").covers_whole_tool());
    assert!(!rule("allow:Bash(ls)").covers_whole_tool());
    assert_eq!(
        rule("deny:Read(./.env)").path_glob().as_deref(),
        Some("/proj/.env")
    );
    assert_eq!(
        rule("deny:Read(.env)").path_glob().as_deref(),
        Some("/proj/**/.env")
    );
    assert_eq!(
        rule("deny:Edit(//etc/**)").path_glob().as_deref(),
        Some("/etc/**")
    );
    assert_eq!(
        rule("deny:Read(~/.ssh/**)").path_glob().as_deref(),
        Some("/home/u/.ssh/**")
    );
    assert_eq!(
        rule("deny:Read(./.env)")
            .path_glob_in(Path::new("/ws"))
            .as_deref(),
        Some("/ws/.env")
    );
    assert_eq!(rule("deny:Write(src/**)").path_glob(), None);
    assert_eq!(rule("deny:Bash(ls)").path_glob(), None);
    let set = set(&[
        "deny:Read(./secrets/**)",
        "allow:Read(./src/**)",
        "deny:Bash(rm:*)",
        "deny:Edit(/.git/**)",
    ]);
    assert_eq!(
        set.denied_path_globs(),
        ["/proj/secrets/**", "/proj/.git/**"]
    );
}

#[test]
fn malformed_rules_say_how_to_write_them() {
    let cases = [
        ("Bash(ls", "never closed"),
        ("Bash(ls))", "text follows"),
        ("Bash ls)", "without `(`"),
        ("(ls)", "tool name is missing"),
        ("", "tool name is missing"),
        ("Bash()", "specifier in `()` is empty"),
        ("Bash(git:* status)", "only at the end"),
        ("Bash(:*)", "needs a command"),
        ("WebFetch(domain:)", "needs a host name"),
        ("WebFetch(domain:https://example.com)", "no scheme"),
        ("Bash (ls)", "not a tool name"),
        ("Ba*sh", "no wildcards"),
        ("Read(.env:*)", "gitignore patterns"),
        ("Read(src/../x)", "`..` may only come at the start"),
        ("Read(~other/x)", "only `~/`"),
        ("mcp__github(x)", "takes no specifier"),
        ("Read([z-a])", "not a valid path pattern"),
        (
            "danger:severe",
            "the levels are safe, low, medium, high and critical",
        ),
        ("danger:>high", "`danger:>=LEVEL`"),
        ("danger:high(rm)", "takes no specifier"),
    ];
    for (text, expected) in cases {
        let err = Rule::parse(Allow, text, origin("test"), Path::new(HOME)).expect_err(text);
        assert!(
            err.reason.contains(expected),
            "`{text}`: `{}` lacks `{expected}`",
            err.reason
        );
        assert!(
            err.to_string()
                .starts_with(&format!("permission rule `{text}`"))
        );
    }
}

#[test]
fn effects_serialize_in_lowercase() {
    assert_eq!(serde_json::to_string(&Ask).unwrap(), "\"ask\"");
    assert_eq!(serde_json::from_str::<Effect>("\"deny\"").unwrap(), Deny);
}

#[test]
fn danger_rules_cover_tools_by_level_whatever_their_names() {
    let call = |tool, danger| CallFacts {
        tool,
        danger,
        subject: Subject::Command("ls".into()),
        cwd: Path::new(BASE),
    };
    let exactly = rule("deny:danger:CRITICAL");
    let above = rule("ask:danger:>=high");
    let below = rule("allow:danger:<=low");
    for level in Danger::ALL {
        let facts = call("deploy", level);
        assert_eq!(
            exactly.matches(&facts),
            level == Danger::Critical,
            "{level}"
        );
        assert_eq!(above.matches(&facts), level >= Danger::High, "{level}");
        assert_eq!(below.matches(&facts), level <= Danger::Low, "{level}");
    }
    // A level rule covers whole tools, so a deny one hides them.
    assert!(exactly.covers_all_calls_of("deploy", Danger::Critical));
    assert!(!exactly.covers_all_calls_of("deploy", Danger::High));
    assert!(rule("deny:Bash").covers_all_calls_of("Bash", Danger::High));
    assert!(!rule("deny:Bash(rm:*)").covers_all_calls_of("Bash", Danger::High));
    // Deny beats allow across the two forms, as between any rules.
    let set = set(&["allow:Bash", "deny:danger:>=high"]);
    assert_eq!(
        set.decide(&call("Bash", Danger::High)).map(|d| d.effect),
        Some(Deny)
    );
    assert_eq!(
        set.decide(&call("Bash", Danger::Medium)).map(|d| d.effect),
        Some(Allow)
    );
}
