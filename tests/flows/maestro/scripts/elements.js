// The ids a suite keeps in one place, as JavaScript-heavy suites do: each flow reads them as
// ${output.login.*} after running this.
output.login = {
    user: 'org.droidmcp.demo.login:id/username',
    welcome: 'org.droidmcp.demo.login:id/welcome',
    logout: 'org.droidmcp.demo.login:id/logout_button',
};

// A helper later steps call: functions stay in `output` too.
output.address = function (name, domain) {
    return name + '@' + domain;
};
