package ner

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestOfflineCJKSpans(t *testing.T) {
	o := NewOffline()
	for _, c := range []struct {
		name, title, text string
		want              map[string]string // name -> type ("" for any)
		avoid             []string
	}{
		{
			name: "brackets, quotes and numbers", title: "战国无双3",
			text: "《战国无双3》是由光荣开发的游戏，主打「战史演武」模式。线路全长548公里，投资11.42亿元，于2014年8月11日正式铺通。",
			want: map[string]string{"战国无双3": "", "战史演武": "other", "548公里": "number", "11.42亿元": "number", "2014年8月11日": "date"},
		},
		{
			name: "recurring strings, longest that recurs as often", title: "赵鹏",
			text:  "赵鹏于1997年加入河南建业青年队，2002年进入河南建业一线队。此后建业与赵鹏续约，建业未能保级。",
			want:  map[string]string{"赵鹏": "document", "河南建业": "", "建业": "", "1997年": "date", "2002年": "date"},
			avoid: []string{"河南", "南建", "入河南建业", "赵鹏于"},
		},
		{
			name: "Latin inside Chinese", title: "Go语言",
			text:  "Go语言由Robert Griesemer、Rob Pike和Ken Thompson设计，ω-force也曾参与。",
			want:  map[string]string{"Robert Griesemer": "", "Rob Pike": "", "Ken Thompson": "", "ω-force": "other"},
			avoid: []string{"由Robert Griesemer", "和Ken Thompson"},
		},
		{
			name: "common words are no terms", title: "某",
			text:  "他们必须工作。他们必须工作。所有人员都在工作。所有人员都在工作。",
			avoid: []string{"必须", "工作", "所有", "人员", "他们"},
		},
		{
			name: "Japanese", title: "東京タワー",
			text: "東京タワーは港区にある電波塔です。東京タワーの高さは333メートルで、港区のシンボルです。",
			want: map[string]string{"東京タワー": "document", "港区": "", "333メートル": "number"},
		},
		{
			// From a rendered Japanese man page: the endings recur more
			// than any word, and long katakana words share their tails.
			name: "Japanese endings and katakana words", title: "passwd",
			text: "passwd はパスワードを変更します。オプションを指定すると設定を変更します。" +
				"バージョンを表示します。オプションを指定すると設定ファイルを削除します。" +
				"バージョンを表示されます。パスワードを変更されます。入力ファイルを読む。出力ファイルに書く。",
			want: map[string]string{"オプション": "", "バージョン": "", "パスワード": ""},
			// 指定, 設定 and 変更 recur in every manual: common words.
			avoid: []string{"します", "ます", "され", "されます", "すると", "ョン", "ション", "ージ", "ード", "変更します", "指定すると", "力ファイル",
				"指定", "設定", "変更"},
		},
		{
			// From rendered Chinese man pages: the fragments cut across
			// words, and words after a function character.
			name: "Chinese word edges", title: "du",
			text: "--help 显示帮助信息并退出。--version 显示版本信息并退出。如果不指定文件，读取标准输入。如果不指定目录，使用当前目录。" +
				"打开一个命令。执行一个命令。郑成功撤退至台湾继续抗清，部众随郑成功迁至台湾。",
			want:  map[string]string{"郑成功": "", "台湾": "location"},
			avoid: []string{"信息并退出", "果不指定", "不指定", "一个命令", "个命令"},
		},
		{
			name: "Korean", title: "서울",
			text: "서울은 대한민국의 수도이다. 한강이 서울을 가로지르며, 한강은 서해로 흐른다.",
			want: map[string]string{"서울": "document", "한강": ""},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, err := o.Extract(context.Background(), Chunk{ID: "c", DocTitle: c.title, Text: c.text})
			if err != nil {
				t.Fatal(err)
			}
			got := entityNames(x.Entities)
			for name, typ := range c.want {
				e, ok := got[name]
				if !ok {
					t.Errorf("missing %q; got %v", name, keys(got))
				} else if typ != "" && e.Type != typ {
					t.Errorf("%q typed %q, want %q", name, e.Type, typ)
				}
			}
			for _, name := range c.avoid {
				if _, ok := got[name]; ok {
					t.Errorf("unwanted %q", name)
				}
			}
		})
	}
}

// TestOfflineCJKRelations: terms of one sentence (。！？；) relate, described
// by what lies between them; terms of different sentences do not.
func TestOfflineCJKRelations(t *testing.T) {
	x, err := NewOffline().Extract(context.Background(), Chunk{ID: "c", DocTitle: "稻花香2号",
		Text: "稻花香2号是五常市选育的水稻品种，亲本为松粳9号；五常市位于黑龙江省。1996年，田永太在五常市发现了它。"})
	if err != nil {
		t.Fatal(err)
	}
	rel := map[string]Relation{}
	for _, r := range x.Relations {
		rel[r.Source+"|"+r.Target] = r
		rel[r.Target+"|"+r.Source] = r
	}
	r, ok := rel["稻花香2号|松粳9号"]
	if !ok || !strings.Contains(r.Keywords, "亲本") || !strings.Contains(r.Description, "亲本为松粳9号") {
		t.Errorf("稻花香2号 - 松粳9号 = %+v, %v", r, ok)
	}
	if _, ok := rel["松粳9号|黑龙江省"]; ok {
		t.Error("松粳9号 and 黑龙江省 are in different sentences (；) but related")
	}
	if _, ok := rel["1996年|松粳9号"]; ok {
		t.Error("1996年 and 松粳9号 are in different sentences (。) but related")
	}
}

func TestOfflineCJKMentions(t *testing.T) {
	o := NewOffline()
	for q, want := range map[string][]string{
		"稻花香2号的亲本是哪个品种？":          {"稻花香2号", "亲本"},
		"赵鹏于哪一年加入河南建业？":           {"赵鹏", "加入河南建业"},
		"《梓州南亭得池字》是谁写的？":          {"梓州南亭得池字"},
		"2011年香港科技大学为刘燕卿授予了什么荣誉？": {"2011年", "香港科技大学", "刘燕卿授予"},
		"東京タワーの高さは何メートルですか":       {"東京タワー"},
		"서울의 인구는 몇 명입니까?":         {"서울", "인구"},
	} {
		var got []string
		for _, e := range o.Mentions(q) {
			got = append(got, e.Name)
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("Mentions(%s) = %q, lacks %q", q, got, w)
			}
		}
		for _, g := range got {
			if strings.Contains(g, "什么") || strings.Contains(g, "哪") || g == "荣誉" || g == "メートル" {
				t.Errorf("Mentions(%s) = %q: %q is a question word or what is asked for", q, got, g)
			}
		}
	}
}

func TestOfflineCJKTypes(t *testing.T) {
	o := NewOffline()
	for _, c := range []struct {
		name, text string
		want       map[string]string // name -> type
	}{
		{
			name: "Japanese honorifics, companies and prefectures",
			text: "田中先生は株式会社ソニーに勤めた。田中先生と株式会社ソニーは神奈川県にある。神奈川県の鈴木さんは話した。鈴木さんも来た。",
			want: map[string]string{"田中": "person", "株式会社ソニー": "organization", "神奈川県": "location", "鈴木": "person"},
		},
		{
			name: "Chinese speakers, organisations and places",
			text: "王建国表示，清华大学将在海淀区建楼。王建国表示支持。清华大学和海淀区都同意。",
			want: map[string]string{"王建国": "person", "清华大学": "organization", "海淀区": "location"},
		},
		{
			name: "technical words that end like places",
			text: "缓冲区的内容写入管道。缓冲区满时管道阻塞。缺省值是缺省。",
			want: map[string]string{"缓冲区": "other", "管道": "other"},
		},
		{
			name: "programs and authors in a manual",
			text: "tar コマンドはアーカイブを作る。詳しくは bzip2(1) を見よ。作者 David MacKenzie および Jim Meyering。",
			want: map[string]string{"tar": "technology", "bzip2": "technology", "David MacKenzie": "person", "Jim Meyering": "person"},
		},
		{
			name: "Chinese authors",
			text: "由 David MacKenzie 和 Jim Meyering 编写。使用 ftp 命令连接。",
			want: map[string]string{"David MacKenzie": "person", "Jim Meyering": "person", "ftp": "technology"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, err := o.Extract(context.Background(), Chunk{ID: "c", Text: c.text})
			if err != nil {
				t.Fatal(err)
			}
			got := entityNames(x.Entities)
			for name, typ := range c.want {
				if e, ok := got[name]; !ok {
					t.Errorf("missing %q; got %v", name, keys(got))
				} else if e.Type != typ {
					t.Errorf("%q typed %q, want %q", name, e.Type, typ)
				}
			}
		})
	}
}
