//! The mixed-language search corpus: planted messages, distractors and filler in English,
//! Chinese, Japanese and Korean, and the queries with the needles an independent oracle (a
//! naive scan of the text) uses to decide relevance: `W` = case-insensitive and
//! Latin-word-bounded, `S` = case-insensitive substring. Shared by the SQLite search tests
//! (`src/search_tests/recall.rs`) and the store conformance suite every backend runs.

#![allow(dead_code)]

pub enum N {
    W(&'static str),
    S(&'static str),
}

/// (class, query, needles)
pub const QUERIES: &[(&str, &str, &[N])] = &[
    ("english word", "kubernetes", &[N::W("kubernetes")]),
    ("english word", "rollback", &[N::W("rollback")]),
    ("english word", "latency", &[N::W("latency")]),
    ("english word", "webhook", &[N::W("webhook")]),
    ("english word", "throttling", &[N::W("throttling")]),
    ("english word", "Postgres", &[N::W("postgres")]),
    (
        "english phrase",
        "\"connection refused\"",
        &[N::S("connection refused")],
    ),
    (
        "english phrase",
        "\"out of memory\"",
        &[N::S("out of memory")],
    ),
    (
        "english phrase",
        "\"rate limit exceeded\"",
        &[N::S("rate limit exceeded")],
    ),
    (
        "english phrase",
        "\"permission denied\"",
        &[N::S("permission denied")],
    ),
    (
        "english phrase",
        "\"merge conflict\"",
        &[N::S("merge conflict")],
    ),
    ("english phrase", "\"disk quota\"", &[N::S("disk quota")]),
    ("identifier", "user_id", &[N::W("user_id")]),
    ("identifier", "settings.yaml", &[N::W("settings.yaml")]),
    ("identifier", "max-retries", &[N::W("max-retries")]),
    (
        "identifier",
        "alice@example.com",
        &[N::W("alice@example.com")],
    ),
    (
        "identifier",
        "/etc/nginx/nginx.conf",
        &[N::W("/etc/nginx/nginx.conf")],
    ),
    ("identifier", "HTTP_PROXY", &[N::W("http_proxy")]),
    ("identifier", "v2.3.1", &[N::W("v2.3.1")]),
    ("chinese 3+", "数据库迁移", &[N::S("数据库迁移")]),
    ("chinese 3+", "负载均衡", &[N::S("负载均衡")]),
    ("chinese 3+", "内存泄漏", &[N::S("内存泄漏")]),
    ("chinese 3+", "单元测试", &[N::S("单元测试")]),
    ("chinese 3+", "配置文件", &[N::S("配置文件")]),
    ("chinese 3+", "缓存失效", &[N::S("缓存失效")]),
    ("chinese 2", "用户", &[N::S("用户")]),
    ("chinese 2", "配置", &[N::S("配置")]),
    ("chinese 2", "日志", &[N::S("日志")]),
    ("chinese 2", "权限", &[N::S("权限")]),
    ("chinese 2", "索引", &[N::S("索引")]),
    ("chinese 2", "线程", &[N::S("线程")]),
    ("chinese 1", "猫", &[N::S("猫")]),
    ("chinese 1", "雨", &[N::S("雨")]),
    ("chinese 1", "茶", &[N::S("茶")]),
    ("chinese 1", "龙", &[N::S("龙")]),
    ("chinese 1", "鱼", &[N::S("鱼")]),
    ("chinese 1", "雪", &[N::S("雪")]),
    ("japanese", "データベース", &[N::S("データベース")]),
    ("japanese", "ログイン", &[N::S("ログイン")]),
    ("japanese", "設定", &[N::S("設定")]),
    ("japanese", "東京", &[N::S("東京")]),
    ("japanese", "ありがとう", &[N::S("ありがとう")]),
    ("japanese", "サーバー", &[N::S("サーバー")]),
    ("korean", "데이터베이스", &[N::S("데이터베이스")]),
    ("korean", "로그인", &[N::S("로그인")]),
    ("korean", "설정", &[N::S("설정")]),
    ("korean", "서버", &[N::S("서버")]),
    ("korean", "사용자", &[N::S("사용자")]),
    ("korean", "배포", &[N::S("배포")]),
    ("mixed", "redis 缓存", &[N::W("redis"), N::S("缓存")]),
    ("mixed", "docker 镜像", &[N::W("docker"), N::S("镜像")]),
    ("mixed", "API 密钥", &[N::W("api"), N::S("密钥")]),
    (
        "mixed",
        "nginx 反向代理",
        &[N::W("nginx"), N::S("反向代理")],
    ),
    (
        "mixed",
        "Python スクリプト",
        &[N::W("python"), N::S("スクリプト")],
    ),
    ("mixed", "git 브랜치", &[N::W("git"), N::S("브랜치")]),
    ("glued identifier", "config_path", &[N::W("config_path")]),
    ("glued identifier", "max_tokens", &[N::W("max_tokens")]),
    ("glued identifier", "API_KEY", &[N::W("api_key")]),
    ("glued identifier", "timeout_ms", &[N::W("timeout_ms")]),
    ("glued identifier", "log_level", &[N::W("log_level")]),
    ("glued identifier", "deploy_env", &[N::W("deploy_env")]),
    (
        "glued identifier",
        "配置config_path文件",
        &[N::S("配置config_path文件")],
    ),
];

/// Planted messages: (role, content, tool_name, tool_calls).
pub const PLANTED: &[(&str, &str, Option<&str>, Option<&str>)] = &[
    (
        "user",
        "Our kubernetes cluster keeps evicting pods",
        None,
        None,
    ),
    (
        "assistant",
        "I checked the Kubernetes scheduler logs for the eviction",
        None,
        None,
    ),
    (
        "user",
        "please do a rollback of the last release",
        None,
        None,
    ),
    (
        "assistant",
        "Rollback completed; the previous image is live",
        None,
        None,
    ),
    ("user", "p99 latency went up after the change", None, None),
    (
        "assistant",
        "latency is back to normal, the cache warmed up",
        None,
        None,
    ),
    ("user", "the webhook from GitHub never arrives", None, None),
    (
        "tool",
        "webhook delivery failed: 502",
        Some("http_get"),
        None,
    ),
    (
        "assistant",
        "we are throttling requests to the upstream",
        None,
        None,
    ),
    ("user", "Postgres vacuum takes hours", None, None),
    (
        "assistant",
        "postgres autovacuum settings were too conservative",
        None,
        None,
    ),
    (
        "tool",
        "error: connection refused (os error 111)",
        Some("terminal"),
        None,
    ),
    (
        "user",
        "why is the connection refused when I curl it",
        None,
        None,
    ),
    (
        "tool",
        "fatal: out of memory while compiling",
        Some("terminal"),
        None,
    ),
    (
        "assistant",
        "the job ran out of memory, raise the limit",
        None,
        None,
    ),
    (
        "tool",
        "HTTP 429 rate limit exceeded, retry later",
        Some("http_get"),
        None,
    ),
    (
        "tool",
        "bash: ./run.sh: permission denied",
        Some("terminal"),
        None,
    ),
    (
        "assistant",
        "Permission denied means the file is not executable",
        None,
        None,
    ),
    ("user", "I have a merge conflict in main.rs", None, None),
    (
        "assistant",
        "resolve the merge conflict by keeping both hunks",
        None,
        None,
    ),
    (
        "tool",
        "warning: disk quota almost reached on /home",
        Some("terminal"),
        None,
    ),
    (
        "user",
        "rename user_id to account_id in the schema",
        None,
        None,
    ),
    (
        "assistant",
        "",
        Some("edit_file"),
        Some(r#"{"path":"db/schema.sql","old":"user_id"}"#),
    ),
    ("user", "where does settings.yaml live?", None, None),
    (
        "assistant",
        "set max-retries to 5 in the client",
        None,
        None,
    ),
    ("user", "send the report to alice@example.com", None, None),
    (
        "assistant",
        "",
        Some("read_file"),
        Some(r#"{"path":"/etc/nginx/nginx.conf"}"#),
    ),
    (
        "user",
        "export HTTP_PROXY before running the installer",
        None,
        None,
    ),
    (
        "assistant",
        "upgrade to v2.3.1 which fixes the crash",
        None,
        None,
    ),
    ("user", "周末要做数据库迁移，请准备回滚方案", None, None),
    ("assistant", "数据库迁移脚本已经写好了", None, None),
    ("user", "负载均衡器的健康检查失败了", None, None),
    ("assistant", "服务有内存泄漏，重启后恢复", None, None),
    ("user", "请补充单元测试覆盖边界情况", None, None),
    ("assistant", "我修改了配置文件里的端口号", None, None),
    ("user", "缓存失效导致数据库压力很大", None, None),
    ("user", "用户登录后看不到订单", None, None),
    (
        "assistant",
        "这个用户的会话已经过期，用户需要重新登录",
        None,
        None,
    ),
    ("user", "日志里全是超时错误", None, None),
    ("assistant", "请检查文件权限是否正确", None, None),
    ("user", "给这个表加一个索引吧", None, None),
    ("assistant", "线程池已经满了，所以请求被拒绝", None, None),
    ("user", "我家的猫今天很乖，猫一直在睡觉", None, None),
    ("user", "外面在下雨，记得带伞", None, None),
    ("assistant", "我喜欢喝绿茶", None, None),
    ("user", "龙年快乐", None, None),
    ("user", "晚饭吃鱼还是吃肉", None, None),
    ("user", "北方今天下雪了", None, None),
    (
        "user",
        "データベースの接続がタイムアウトしました",
        None,
        None,
    ),
    (
        "assistant",
        "ログインできない場合はパスワードをリセットしてください",
        None,
        None,
    ),
    ("user", "設定ファイルを更新しました", None, None),
    ("user", "来週東京に出張します", None, None),
    ("user", "ありがとうございます、助かりました", None, None),
    ("assistant", "サーバーを再起動しました", None, None),
    ("user", "데이터베이스 연결이 끊어졌습니다", None, None),
    ("assistant", "로그인 페이지가 열리지 않아요", None, None),
    ("user", "설정 파일을 확인해 주세요", None, None),
    ("assistant", "서버가 응답하지 않습니다", None, None),
    ("user", "사용자 권한을 변경했습니다", None, None),
    ("assistant", "배포가 완료되었습니다", None, None),
    ("user", "redis 缓存命中率太低", None, None),
    ("assistant", "docker 镜像太大了，需要瘦身", None, None),
    ("user", "API 密钥泄露了，马上轮换", None, None),
    ("assistant", "nginx 反向代理配置好了", None, None),
    ("user", "Python スクリプトが動きません", None, None),
    ("assistant", "git 브랜치를 새로 만들었습니다", None, None),
    ("user", "请修改配置config_path文件里的值", None, None),
    ("assistant", "请把max_tokens设置为4096", None, None),
    ("user", "把API_KEY放到环境变量里", None, None),
    (
        "assistant",
        "タイムアウトはtimeout_msで指定します",
        None,
        None,
    ),
    ("user", "設定はlog_levelです", None, None),
    (
        "assistant",
        "배포deploy_env값을 prod로 바꿨어요",
        None,
        None,
    ),
];

/// Distractors: share words, characters or substrings with the queries.
pub const DISTRACTORS: &[&str] = &[
    "the deployment of kube tooling went fine",
    "rolled back nothing, just a roll of the dice",
    "we measured the latencies twice",
    "hooks and webs are unrelated",
    "the throttle valve is open",
    "postgresql-client is installed",
    "refused to merge the connection pool changes",
    "memory of the outage",
    "the limit was not exceeded, rate is fine",
    "denied the permission request politely",
    "conflict resolution merge strategy docs",
    "quota for disk images",
    "userid and user id are not the same spelling",
    "settings yaml parsing library",
    "retries max out at three",
    "alice example com is not an email",
    "nginx is installed under etc",
    "proxy settings for http clients",
    "version 2 3 1 notes",
    "数据库备份已经完成",
    "迁移到新的机房",
    "负载很高",
    "内存占用正常",
    "测试环境已准备好",
    "文件已经上传",
    "缓存命中",
    "使用者和户口是两回事",
    "配额已经用完",
    "日本的志愿者",
    "权利和限制",
    "索取发票",
    "线路和程序",
    "我家的狗今天很乖",
    "天气晴朗",
    "喝咖啡",
    "虎年快乐",
    "晚饭吃肉",
    "北方今天很冷",
    "データの分析",
    "ログアウトしました",
    "定期的に更新",
    "京都に行きます",
    "どういたしまして",
    "サービスを停止",
    "데이터 분석",
    "로그아웃 되었습니다",
    "파일을 확인",
    "서비스 중단",
    "관리자 권한",
    "배송이 완료",
    "redis is healthy",
    "镜子坏了",
    "api docs updated",
    "代理商联系了我们",
    "python is installed",
    "git status is clean",
    "config and path are separate words",
    "the max tokens setting",
    "apikey rotation",
    "timeout and ms",
    "log level verbose",
    "the reconfig_paths helper is internal",
];

pub fn oracle(hay: &str, needles: &[N], is_cjk: fn(char) -> bool) -> bool {
    let h = hay.to_lowercase();
    needles.iter().all(|n| match n {
        N::S(s) => h.contains(&s.to_lowercase()),
        N::W(w) => {
            let w = w.to_lowercase();
            h.match_indices(&w).any(|(i, _)| {
                let before = h[..i].chars().next_back();
                let after = h[i + w.len()..].chars().next();
                let ok = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() || is_cjk(c));
                ok(before) && ok(after)
            })
        }
    })
}

pub const FILLER_EN: &[&str] = &[
    "let me look at that",
    "running the test suite now",
    "the build is green",
    "can you explain the output",
    "here is the summary of changes",
    "I updated the README",
];
pub const FILLER_ZH: &[&str] = &[
    "好的，我来看看",
    "构建成功了",
    "请解释一下输出",
    "这是改动的总结",
];
pub const FILLER_JA: &[&str] = &[
    "確認します",
    "ビルドが成功しました",
    "出力を説明してください",
];
pub const FILLER_KO: &[&str] = &[
    "확인하겠습니다",
    "빌드가 성공했습니다",
    "출력을 설명해 주세요",
];

/// The corpus's sessions (id, source); entry `k` goes to session `k % SESSIONS.len()`.
pub const SESSIONS: [(&str, &str); 6] = [
    ("s-cli-1", "cli"),
    ("s-cli-2", "cli"),
    ("s-tg-1", "telegram"),
    ("s-dc-1", "discord"),
    ("s-tui-1", "tui"),
    ("s-cli-3", "cli"),
];

/// One stored message of the corpus: role, content, tool name, tool-call arguments.
pub type Entry = (
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
);

/// The corpus in storage order: each planted message, then a distractor while there are
/// any, then a filler line (cycling through the four languages), then the remaining
/// distractors. The `k`-th entry goes to session `k % sessions`.
pub fn entries() -> Vec<Entry> {
    let fillers: Vec<&'static str> = [FILLER_EN, FILLER_ZH, FILLER_JA, FILLER_KO].concat();
    let mut out: Vec<Entry> = Vec::new();
    for (i, planted) in PLANTED.iter().enumerate() {
        out.push(*planted);
        if let Some(d) = DISTRACTORS.get(i) {
            out.push(("assistant", d, None, None));
        }
        out.push(("user", fillers[i % fillers.len()], None, None));
    }
    for d in DISTRACTORS.iter().skip(PLANTED.len()) {
        out.push(("assistant", d, None, None));
    }
    out
}
